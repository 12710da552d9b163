package metrics_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/llm/offline"
	"github.com/agentmemory/agentmemory/llm/openai"
	"github.com/agentmemory/agentmemory/metrics"
	"github.com/agentmemory/agentmemory/usage"
)

// endpoint is a fake model endpoint whose chat answers report 11 input
// and 3 output tokens, and whose embeddings report 5 tokens a text.
func endpoint(t *testing.T) (*fakeopenai.Server, *openai.Chat, *openai.Embedder) {
	t.Helper()
	srv := fakeopenai.New(t)
	srv.HandleChat(func(fakeopenai.Request) fakeopenai.Reply { return fakeopenai.Text("noted").WithUsage(11, 3) })
	srv.HandleEmbeddings(func(r fakeopenai.Request) fakeopenai.Reply {
		vs := make([][]float32, len(r.Embeddings.Input))
		for i, in := range r.Embeddings.Input {
			vs[i] = fakeopenai.Vector(in, 4)
		}
		return fakeopenai.Embeddings(vs...).WithUsage(5*len(vs), 0)
	})
	cfg := openai.Config{BaseURL: srv.URL(), ChatModel: "chat", EmbeddingModel: "emb", EmbeddingModelDimensions: 4, MaxRetries: -1}
	chat, err := openai.NewChat(cfg)
	require.NoError(t, err)
	emb, err := openai.NewEmbedder(cfg)
	require.NoError(t, err)
	return srv, chat, emb
}

func ask(text string) *agent.ChatRequest {
	return &agent.ChatRequest{Messages: []agent.Message{agent.UserText(text)}}
}

// Model calls are counted by role, with the tokens the endpoint reported.
func TestModelCallsAndTokensByRole(t *testing.T) {
	rec, reg := newRecorder(t)
	srv, c, e := endpoint(t)
	chat, mini, emb := rec.Models(c, c, e)
	ctx := context.Background()

	for range 2 {
		_, err := chat.Complete(ctx, ask("hello"))
		require.NoError(t, err)
	}
	_, err := mini.Complete(ctx, ask("hello"))
	require.NoError(t, err)
	_, err = emb.Embed(ctx, []string{"tea", "coffee", "water"})
	require.NoError(t, err)
	srv.QueueChat(fakeopenai.Error(http.StatusInternalServerError, "down"))
	_, err = mini.Complete(ctx, ask("hello"))
	require.Error(t, err)

	fams := scrape(t, reg)
	const calls, errs, tokens = "agentmemory_model_call_duration_seconds", "agentmemory_model_call_errors_total", "agentmemory_model_tokens_total"
	assert.Equal(t, uint64(2), count(fams, calls, "role", "chat"))
	assert.Equal(t, uint64(2), count(fams, calls, "role", "mini"), "the failed call is timed too")
	assert.Equal(t, uint64(1), count(fams, calls, "role", "embed"))
	assert.Equal(t, 0.0, counter(fams, errs, "role", "chat"))
	assert.Equal(t, 1.0, counter(fams, errs, "role", "mini"))
	assert.Equal(t, 22.0, counter(fams, tokens, "role", "chat", "type", "input"))
	assert.Equal(t, 6.0, counter(fams, tokens, "role", "chat", "type", "output"))
	assert.Equal(t, 11.0, counter(fams, tokens, "role", "mini", "type", "input"))
	assert.Equal(t, 3.0, counter(fams, tokens, "role", "mini", "type", "output"))
	assert.Equal(t, 15.0, counter(fams, tokens, "role", "embed", "type", "input"))
}

// A client that streams still streams once counted, and its call is
// counted when the stream ends, with the usage of its last chunk.
func TestAStreamingClientStillStreams(t *testing.T) {
	rec, reg := newRecorder(t)
	_, c, _ := endpoint(t)
	chat := rec.Chat(metrics.RoleChat, c)
	s, ok := chat.(agent.ChatStreamer)
	require.True(t, ok, "llm/openai streams; the counted client must too")

	var text string
	var resp *agent.ChatResponse
	for d, err := range s.CompleteStream(context.Background(), ask("hello")) {
		require.NoError(t, err)
		text += d.Text
		if d.Response != nil {
			resp = d.Response
		}
	}
	assert.Equal(t, "noted", text)
	require.NotNil(t, resp)

	// A consumer that stops after the first piece ends the call, not
	// as a failure.
	for range s.CompleteStream(context.Background(), ask("hello")) {
		break
	}

	fams := scrape(t, reg)
	assert.Equal(t, uint64(2), count(fams, "agentmemory_model_call_duration_seconds", "role", "chat"))
	assert.Equal(t, 0.0, counter(fams, "agentmemory_model_call_errors_total", "role", "chat"))
	assert.Equal(t, 11.0, counter(fams, "agentmemory_model_tokens_total", "role", "chat", "type", "input"))
	assert.Equal(t, 3.0, counter(fams, "agentmemory_model_tokens_total", "role", "chat", "type", "output"))

	off, err := offline.New(offline.Config{})
	require.NoError(t, err)
	_, ok = rec.Chat(metrics.RoleChat, off).(agent.ChatStreamer)
	assert.False(t, ok, "a client that does not stream is not made to")
}

// The counted embedder keeps what the embedder is: a usage.Embedder over
// it still counts each operation's tokens, and a lexical one stays
// lexical (no vectors stored) and reports no tokens.
func TestCountedEmbedderKeepsItsNature(t *testing.T) {
	rec, reg := newRecorder(t)
	_, _, e := endpoint(t)
	emb := usage.Embedder(rec.Embedder(e))
	var m usage.Meter
	_, err := emb.Embed(usage.WithMeter(context.Background(), &m), []string{"tea", "coffee"})
	require.NoError(t, err)
	assert.Equal(t, usage.Totals{EmbeddingTokens: 10, EmbeddingCalls: 1}, m.Totals(), "the operation's meter still counts")
	assert.Equal(t, 10.0, counter(scrape(t, reg), "agentmemory_model_tokens_total", "role", "embed", "type", "input"), "and so does the recorder, once")
	assert.False(t, embed.IsLexical(emb))
	assert.Equal(t, e.Model(), emb.Model())
	assert.Equal(t, 4, emb.Dimensions())

	lex, err := lexical.New(lexical.Config{})
	require.NoError(t, err)
	counted := rec.Embedder(lex)
	assert.True(t, embed.IsLexical(counted))
	_, reports := counted.(usage.TokenReportingEmbedder)
	assert.False(t, reports)
	_, err = counted.Embed(context.Background(), []string{"tea"})
	require.NoError(t, err)
	assert.Equal(t, uint64(2), count(scrape(t, reg), "agentmemory_model_call_duration_seconds", "role", "embed"))
}

// Without a Recorder nothing is wrapped or counted.
func TestANilRecorderPassesEverythingThrough(t *testing.T) {
	var rec *metrics.Recorder
	_, c, e := endpoint(t)
	chat, mini, emb := rec.Models(c, nil, e)
	assert.Same(t, c, chat.(*openai.Chat))
	assert.Nil(t, mini)
	assert.Same(t, e, emb.(*openai.Embedder))
	st := openSQLite(t, 0)
	defer st.Close()
	assert.Same(t, st, rec.Store(st).(interface{ As(any) bool }))
	rec.Request("get_update", 200, 0)
	assert.NoError(t, rec.WatchQueue(nil))

	live, _ := newRecorder(t)
	chat, mini, emb = live.Models(nil, nil, nil)
	assert.Nil(t, chat)
	assert.Nil(t, mini)
	assert.Nil(t, emb)
	assert.Nil(t, live.Store(nil))
}
