package provider_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/retrieval"
	"github.com/agentmemory/agentmemory/usage"
)

// Background work keeps the values of the context that queued it: the
// pruning a Record queues, and the summaries and reflection an EndSession
// queues, count into the caller's usage.Meter, and another caller's
// Meter sees none of it.
func TestBackgroundWorkCountsIntoTheCallersMeter(t *testing.T) {
	f := newFixture(t, func(c *provider.Config) {
		c.Chat, c.Mini, c.Embedder = usage.Chat(c.Chat), usage.Chat(c.Mini), usage.Embedder(c.Embedder)
		c.ReconcileEvery, c.ProfileEvery = 1, 1
	})
	const prompt, completion = 11, 4
	f.srv.HandleChat(func(r fakeopenai.Request) fakeopenai.Reply {
		return f.model.answer(r).WithUsage(prompt, completion)
	})
	const embTokens = 3
	f.srv.HandleEmbeddings(func(r fakeopenai.Request) fakeopenai.Reply {
		vs := make([][]float32, len(r.Embeddings.Input))
		for i, in := range r.Embeddings.Input {
			vs[i] = fakeopenai.Vector(in, dims)
		}
		return fakeopenai.Embeddings(vs...).WithUsage(embTokens, 0)
	})

	var mine, other usage.Meter
	ctx := usage.WithMeter(context.Background(), &mine)
	sess, err := agent.NewSession("s1", "u1")
	require.NoError(t, err)
	for i := range 30 { // enough turns that Record queues pruning
		require.NoError(t, f.mem.Record(ctx, sess, agent.UserText(fmt.Sprintf("I am saving for retirement, step %d of my 401k plan.", i))))
	}
	_, err = f.mem.EndSession(ctx, sess)
	require.NoError(t, err)
	require.NoError(t, f.mem.Flush(context.Background()))
	// A search by someone else counts into theirs only.
	_, err = f.mem.Retriever().Search(usage.WithMeter(context.Background(), &other), "u1", "retirement plan", retrieval.SearchOptions{})
	require.NoError(t, err)

	chats, embeds := f.srv.ChatRequests(), f.srv.EmbeddingRequests()
	f.model.mu.Lock()
	reflections, profiles := f.model.reflections, f.model.profiles
	f.model.mu.Unlock()
	require.Positive(t, reflections, "reflection ran (in the background)")
	require.Positive(t, profiles, "the profile was updated (in the background)")
	got, theirs := mine.Totals(), other.Totals()
	assert.Equal(t, len(chats), got.ChatCalls+theirs.ChatCalls, "every chat call counted once")
	assert.Equal(t, len(chats)*prompt, got.InputTokens+theirs.InputTokens)
	assert.Equal(t, len(chats)*completion, got.OutputTokens+theirs.OutputTokens)
	assert.Equal(t, len(embeds), got.EmbeddingCalls+theirs.EmbeddingCalls)
	assert.Equal(t, len(embeds)*embTokens, got.EmbeddingTokens+theirs.EmbeddingTokens)
	assert.Equal(t, 0, theirs.ChatCalls, "a direct search calls no chat model")
	assert.Equal(t, 1, theirs.EmbeddingCalls, "the search's one query embedding")
}
