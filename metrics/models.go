package metrics

import (
	"context"
	"iter"
	"time"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/usage"
)

// Role is the work a model client does for a memory store, the label its
// calls are counted under.
type Role string

// The roles of a memory store's models: provider.Config's Chat, Mini and
// Embedder.
const (
	RoleChat  Role = "chat"
	RoleMini  Role = "mini"
	RoleEmbed Role = "embed"
)

// Models wraps a memory store's clients, each counted under its role; a
// nil client stays nil. Its signature is memoryservice.Config.WrapModels'.
func (r *Recorder) Models(chat, mini agent.ChatClient, emb embed.Embedder) (agent.ChatClient, agent.ChatClient, embed.Embedder) {
	return r.Chat(RoleChat, chat), r.Chat(RoleMini, mini), r.Embedder(emb)
}

// Chat returns c counted under role: each call's duration, its failure,
// and the input and output tokens its response reports. A client that
// streams (agent.ChatStreamer) still does, counted once its stream ends.
// A nil Recorder or a nil c returns c.
func (r *Recorder) Chat(role Role, c agent.ChatClient) agent.ChatClient {
	if r == nil || c == nil {
		return c
	}
	cc := countedChat{r: r, role: string(role), c: c}
	if s, ok := c.(agent.ChatStreamer); ok {
		return countedStreamer{countedChat: cc, s: s}
	}
	return cc
}

// modelCall counts one model call of role that took d, failed with err
// (nil when it did not), and spent the tokens of resp (nil when none).
func (r *Recorder) modelCall(role string, d time.Duration, err error, resp *agent.ChatResponse) {
	r.modelSeconds.WithLabelValues(role).Observe(d.Seconds())
	if err != nil {
		r.modelErrors.WithLabelValues(role).Inc()
	}
	if resp != nil {
		r.addTokens(role, resp.Usage.PromptTokens, resp.Usage.CompletionTokens)
	}
}

func (r *Recorder) addTokens(role string, input, output int) {
	if input > 0 {
		r.modelTokens.WithLabelValues(role, "input").Add(float64(input))
	}
	if output > 0 {
		r.modelTokens.WithLabelValues(role, "output").Add(float64(output))
	}
}

// countedChat is a ChatClient whose calls a Recorder counts.
type countedChat struct {
	r    *Recorder
	role string
	c    agent.ChatClient
}

func (c countedChat) Complete(ctx context.Context, req *agent.ChatRequest) (*agent.ChatResponse, error) {
	start := time.Now()
	resp, err := c.c.Complete(ctx, req)
	c.r.modelCall(c.role, time.Since(start), err, resp)
	return resp, err
}

// Unwrap returns the client counted.
func (c countedChat) Unwrap() agent.ChatClient { return c.c }

// countedStreamer is a countedChat over a client that streams.
type countedStreamer struct {
	countedChat
	s agent.ChatStreamer
}

// CompleteStream yields s's stream as it is, and counts the call when the
// stream ends: its whole duration, its failure, and the tokens of the
// response it ended with. A consumer that stops early ends the call
// without a failure.
func (c countedStreamer) CompleteStream(ctx context.Context, req *agent.ChatRequest) iter.Seq2[agent.ChatDelta, error] {
	return func(yield func(agent.ChatDelta, error) bool) {
		start := time.Now()
		var (
			resp *agent.ChatResponse
			err  error
		)
		defer func() { c.r.modelCall(c.role, time.Since(start), err, resp) }()
		for d, e := range c.s.CompleteStream(ctx, req) {
			if e != nil {
				err = e
			}
			if d.Response != nil {
				resp = d.Response
			}
			if !yield(d, e) {
				return
			}
		}
	}
}

// Embedder returns e counted under RoleEmbed: each call's duration, its
// failure, and, when e reports them (usage.TokenReportingEmbedder, as
// llm/openai's does), the input tokens. The result keeps e's nature: it
// is lexical when e is, and reports tokens when e does. A nil Recorder
// or a nil e returns e.
func (r *Recorder) Embedder(e embed.Embedder) embed.Embedder {
	if r == nil || e == nil {
		return e
	}
	ce := countedEmbedder{r: r, e: e}
	if t, ok := e.(usage.TokenReportingEmbedder); ok {
		return countingEmbedder{countedEmbedder: ce, t: t}
	}
	return ce
}

// countedEmbedder is an Embedder whose calls a Recorder counts.
type countedEmbedder struct {
	r *Recorder
	e embed.Embedder
}

func (c countedEmbedder) Model() string   { return c.e.Model() }
func (c countedEmbedder) Dimensions() int { return c.e.Dimensions() }

// Lexical reports what the embedder counted reports (embed.Lexical).
func (c countedEmbedder) Lexical() bool { return embed.IsLexical(c.e) }

// Unwrap returns the embedder counted.
func (c countedEmbedder) Unwrap() embed.Embedder { return c.e }

func (c countedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	start := time.Now()
	vs, err := c.e.Embed(ctx, texts)
	c.r.modelCall(string(RoleEmbed), time.Since(start), err, nil)
	return vs, err
}

// countingEmbedder is a countedEmbedder over an embedder that reports
// the tokens of its calls.
type countingEmbedder struct {
	countedEmbedder
	t usage.TokenReportingEmbedder
}

func (c countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vs, _, err := c.EmbedCounted(ctx, texts)
	return vs, err
}

// EmbedCounted implements usage.TokenReportingEmbedder, so that a
// usage.Embedder over this one still counts the tokens.
func (c countingEmbedder) EmbedCounted(ctx context.Context, texts []string) ([][]float32, int, error) {
	start := time.Now()
	vs, n, err := c.t.EmbedCounted(ctx, texts)
	c.r.modelCall(string(RoleEmbed), time.Since(start), err, nil)
	c.r.addTokens(string(RoleEmbed), n, 0)
	return vs, n, err
}
