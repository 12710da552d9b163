package usage_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/llm/openai"
	"github.com/agentmemory/agentmemory/usage"
)

func clients(t *testing.T, srv *fakeopenai.Server) (agent.ChatClient, embed.Embedder) {
	t.Helper()
	cfg := openai.Config{BaseURL: srv.URL(), ChatModel: "chat", EmbeddingModel: "emb", EmbeddingModelDimensions: 4, MaxRetries: -1}
	chat, err := openai.NewChat(cfg)
	require.NoError(t, err)
	emb, err := openai.NewEmbedder(cfg)
	require.NoError(t, err)
	return usage.Chat(chat), usage.Embedder(emb)
}

func TestEachOperationCountsItsOwnCalls(t *testing.T) {
	srv := fakeopenai.New(t)
	// Every answer reports usage from its request: the prompt tokens are
	// the length of the user text, so two operations' sums differ.
	srv.HandleChat(func(r fakeopenai.Request) fakeopenai.Reply {
		return fakeopenai.Text("ok").WithUsage(len(r.LastUserText()), 2)
	})
	srv.HandleEmbeddings(func(r fakeopenai.Request) fakeopenai.Reply {
		vs := make([][]float32, len(r.Embeddings.Input))
		n := 0
		for i, in := range r.Embeddings.Input {
			vs[i] = fakeopenai.Vector(in, 4)
			n += len(in)
		}
		return fakeopenai.Embeddings(vs...).WithUsage(n, 0)
	})
	chat, emb := clients(t, srv)

	var a, b usage.Meter
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, text := &a, "aaa"
			if i%2 == 1 {
				m, text = &b, "bbbbbbb"
			}
			ctx := usage.WithMeter(context.Background(), m)
			_, err := chat.Complete(ctx, &agent.ChatRequest{Messages: []agent.Message{agent.UserText(text)}})
			assert.NoError(t, err)
			_, err = emb.Embed(ctx, []string{text, text})
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	assert.Equal(t, usage.Totals{InputTokens: 5 * 3, OutputTokens: 5 * 2, EmbeddingTokens: 5 * 6, ChatCalls: 5, EmbeddingCalls: 5}, a.Totals())
	assert.Equal(t, usage.Totals{InputTokens: 5 * 7, OutputTokens: 5 * 2, EmbeddingTokens: 5 * 14, ChatCalls: 5, EmbeddingCalls: 5}, b.Totals())
	assert.Equal(t, 15+10+30, a.Totals().Total())

	// A call without a Meter counts nowhere and still works.
	_, err := chat.Complete(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.UserText("x")}})
	require.NoError(t, err)
	assert.Equal(t, 5, a.Totals().ChatCalls)
}

func TestAFailedCallCountsNothing(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.Error(400, "bad"))
	chat, _ := clients(t, srv)
	var m usage.Meter
	_, err := chat.Complete(usage.WithMeter(context.Background(), &m), &agent.ChatRequest{Messages: []agent.Message{agent.UserText("x")}})
	require.Error(t, err)
	assert.Equal(t, usage.Totals{}, m.Totals(), "no response, nothing to count")
}

func TestWrappingKeepsTheEmbeddersNature(t *testing.T) {
	lex, err := lexical.New(lexical.Config{})
	require.NoError(t, err)
	w := usage.Embedder(lex)
	assert.True(t, embed.IsLexical(w), "a lexical embedder stays lexical")
	assert.Equal(t, lex.Dimensions(), w.Dimensions())
	assert.Equal(t, lex.Model(), w.Model())
	assert.Equal(t, w, usage.Embedder(w), "wrapping twice counts once")

	srv := fakeopenai.New(t)
	_, emb := clients(t, srv)
	assert.False(t, embed.IsLexical(emb))

	// An embedder that does not report tokens is still called; nothing is
	// counted.
	var m usage.Meter
	v, err := w.Embed(usage.WithMeter(context.Background(), &m), []string{"hello world"})
	require.NoError(t, err)
	assert.Len(t, v, 1)
	assert.Equal(t, usage.Totals{}, m.Totals())
}
