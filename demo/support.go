package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agentmemory/agentmemory/agent"
)

// simClock is the demo's clock: the time the story is at. It stands still
// until the demo moves it, so that memory's background work, which the
// demo waits for before moving on, always sees the same time.
type simClock struct {
	mu sync.Mutex
	t  time.Time
}

func newSimClock(t time.Time) *simClock { return &simClock{t: t} }

// Now returns the story's time.
func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// set moves the story to t.
func (c *simClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// advance moves the story on by d.
func (c *simClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// idSeq numbers the ids of sessions and messages ("demo-001"…): random ids
// would change the interaction and insight ids derived from them, and
// with them the order of equally scored search results, on every run.
type idSeq struct {
	mu sync.Mutex
	n  int
}

func (s *idSeq) next() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return fmt.Sprintf("demo-%03d", s.n)
}

// noReply stands where the advisor's model would be when none is
// configured: it writes nothing (the offline client is not a language
// model, and the demo does not pretend one answers). The run still goes
// through memory — context injected, turn stored — with the user's
// message as the turn.
type noReply struct{}

func (noReply) Complete(ctx context.Context, _ *agent.ChatRequest) (*agent.ChatResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &agent.ChatResponse{Message: agent.Message{Role: agent.RoleAssistant}, FinishReason: "stop", Model: "none"}, nil
}

// witness is a context provider that adds nothing: it sees what the
// providers before it injected into a run and what the run produced, so
// that the demo can show the memory the model received.
type witness struct {
	mu       sync.Mutex
	injected []agent.Message
	produced []agent.Message
}

func (*witness) SourceID() string { return "demo-witness" }

func (*witness) Invoking(context.Context, *agent.InvokingContext) (*agent.AIContext, error) {
	return nil, nil
}

func (w *witness) Invoked(_ context.Context, ic *agent.InvokedContext) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.injected, w.produced = slices.Clone(ic.Context), slices.Clone(ic.Response)
	return nil
}

// last returns what the last run was given and produced.
func (w *witness) last() (injected, produced []agent.Message) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.injected, w.produced
}
