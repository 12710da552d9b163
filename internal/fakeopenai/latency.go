package fakeopenai

import "time"

// Latency is a response-time profile, so that tests meet a server as slow
// as a hosted model rather than one that answers in microseconds.
//
// A chat reply waits FirstToken plus PerToken for each of its completion
// tokens: the usage's completion_tokens when the reply sets one
// (WithUsage), else its content, refusal and tool-call names and
// arguments counted at 4 bytes a token, at least 1. An embeddings reply
// waits Embedding, plus PerInput for each input text. Errors and raw
// replies (Error, Raw) wait FirstToken. A reply's own WithDelay adds to
// the profile's. Every wait ends early when the client goes away.
type Latency struct {
	// FirstToken is a chat answer's time to first token.
	FirstToken time.Duration
	// PerToken is the time of each further token of a chat answer.
	PerToken time.Duration
	// Embedding is the time of an embeddings request.
	Embedding time.Duration
	// PerInput is added to an embeddings request for each input text.
	PerInput time.Duration
}

// RealisticLatency is about what gpt-4o-mini-class chat models and
// text-embedding-3-small answer in from a nearby region: 500 ms to the
// first token, 10 ms a token after it (a 20-token tool call takes 0.7 s, a
// 200-token answer 2.5 s), 150 ms an embeddings request.
var RealisticLatency = Latency{FirstToken: 500 * time.Millisecond, PerToken: 10 * time.Millisecond, Embedding: 150 * time.Millisecond}

// WithLatency makes the server answer every request after the time l
// gives it (see Latency).
func WithLatency(l Latency) Option { return func(c *config) { c.latency = l } }

// wait returns how long l makes req's reply r wait.
func (l Latency) wait(req Request, r Reply) time.Duration {
	if r.raw != nil {
		return l.FirstToken
	}
	if req.Kind == KindEmbeddings {
		n := 0
		if req.Embeddings != nil {
			n = len(req.Embeddings.Input)
		}
		return l.Embedding + time.Duration(n)*l.PerInput
	}
	return l.FirstToken + time.Duration(completionTokens(r))*l.PerToken
}

// completionTokens is the reply's completion token count: its usage's, or
// its text at 4 bytes a token, at least 1.
func completionTokens(r Reply) int {
	if r.usage != nil && r.usage.CompletionTokens > 0 {
		return r.usage.CompletionTokens
	}
	n := 0
	if r.content != nil {
		n += len(*r.content)
	}
	if r.refusal != nil {
		n += len(*r.refusal)
	}
	for _, c := range r.toolCalls {
		n += len(c.Name) + len(c.Arguments)
	}
	return max(1, (n+3)/4)
}
