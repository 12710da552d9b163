// Package usage totals the tokens that the model calls of one operation
// spend, however many goroutines and background jobs the operation's work
// passes through.
//
// # Meters
//
// The model clients of a memory service are shared by every user and every
// request, so their own counters cannot say what one request cost. A Meter
// is carried in the context.Context instead: WithMeter attaches it, and the
// clients wrapped by Chat and Embedder add to the Meter of the context each
// call receives. Work queued for later keeps the Meter as long as it keeps
// the context's values (package provider's background jobs do).
//
// # What counts
//
// Chat counts what each response's agent.Usage reports (the offline client
// of llm/offline reports word counts, an estimate). Embedder counts what
// an embedder that reports its tokens says (llm/openai's does); other
// embedders count nothing, and a lexical embedder (embed.IsLexical) is
// never called for vectors at all.
package usage

import (
	"context"
	"sync"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/embed"
)

// Totals are the tokens a Meter counted.
type Totals struct {
	// InputTokens and OutputTokens are the chat calls' prompt and
	// completion tokens.
	InputTokens, OutputTokens int
	// EmbeddingTokens are the embedding calls' input tokens.
	EmbeddingTokens int
	// ChatCalls and EmbeddingCalls count the calls that reported.
	ChatCalls, EmbeddingCalls int
}

// Total is every token counted: input, output and embedding.
func (t Totals) Total() int { return t.InputTokens + t.OutputTokens + t.EmbeddingTokens }

// Meter adds up token counts. The zero value is ready; a Meter is safe for
// concurrent use.
type Meter struct {
	mu sync.Mutex
	t  Totals
}

// AddChat adds one chat call's usage.
func (m *Meter) AddChat(u agent.Usage) {
	m.mu.Lock()
	m.t.InputTokens += max(0, u.PromptTokens)
	m.t.OutputTokens += max(0, u.CompletionTokens)
	m.t.ChatCalls++
	m.mu.Unlock()
}

// AddEmbedding adds one embedding call's input tokens.
func (m *Meter) AddEmbedding(tokens int) {
	m.mu.Lock()
	m.t.EmbeddingTokens += max(0, tokens)
	m.t.EmbeddingCalls++
	m.mu.Unlock()
}

// Totals returns what the Meter counted so far.
func (m *Meter) Totals() Totals {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.t
}

type meterKey struct{}

// WithMeter returns ctx carrying m: the wrapped clients add to m every
// call made with the returned context or one derived from it.
func WithMeter(ctx context.Context, m *Meter) context.Context {
	return context.WithValue(ctx, meterKey{}, m)
}

// From returns the Meter ctx carries, or nil.
func From(ctx context.Context) *Meter {
	m, _ := ctx.Value(meterKey{}).(*Meter)
	return m
}

// Chat returns c counting each response's usage into the Meter of the
// call's context (none: nothing is counted).
func Chat(c agent.ChatClient) agent.ChatClient {
	if c == nil {
		return nil
	}
	if mc, ok := c.(meteredChat); ok {
		return mc // wrapped already: count once
	}
	return meteredChat{c}
}

type meteredChat struct{ c agent.ChatClient }

func (m meteredChat) Complete(ctx context.Context, req *agent.ChatRequest) (*agent.ChatResponse, error) {
	resp, err := m.c.Complete(ctx, req)
	if resp != nil {
		if mt := From(ctx); mt != nil {
			mt.AddChat(resp.Usage)
		}
	}
	return resp, err
}

// TokenReportingEmbedder is implemented by embedders that report the
// input tokens of each call, such as llm/openai's.
type TokenReportingEmbedder interface {
	EmbedCounted(ctx context.Context, texts []string) ([][]float32, int, error)
}

// Embedder returns e counting the tokens of each call into the Meter of
// the call's context, when e reports them (TokenReportingEmbedder). The
// result is lexical (embed.IsLexical) exactly when e is.
func Embedder(e embed.Embedder) embed.Embedder {
	if e == nil {
		return nil
	}
	if me, ok := e.(meteredEmbedder); ok {
		return me
	}
	return meteredEmbedder{e}
}

type meteredEmbedder struct{ e embed.Embedder }

func (m meteredEmbedder) Model() string   { return m.e.Model() }
func (m meteredEmbedder) Dimensions() int { return m.e.Dimensions() }
func (m meteredEmbedder) Lexical() bool   { return embed.IsLexical(m.e) }

func (m meteredEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c, ok := m.e.(TokenReportingEmbedder)
	if !ok {
		return m.e.Embed(ctx, texts)
	}
	vs, n, err := c.EmbedCounted(ctx, texts)
	if mt := From(ctx); mt != nil && (err == nil || n > 0) {
		mt.AddEmbedding(n)
	}
	return vs, err
}

// Unwrap returns the embedder Embedder wrapped.
func (m meteredEmbedder) Unwrap() embed.Embedder { return m.e }
