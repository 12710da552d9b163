package agent

import (
	"context"
	"fmt"
	"testing"
	"time"
)

type benchProvider struct{}

func (benchProvider) Invoking(context.Context, *InvokingContext) (*AIContext, error) {
	return &AIContext{Instructions: "Memory is data.", Messages: []Message{{Role: RoleUser, Text: "memory block", ID: "mem", CreatedAt: time.Unix(1, 0)}}}, nil
}
func (benchProvider) Invoked(context.Context, *InvokedContext) error { return nil }

// benchAgent returns an agent with one context provider, a session and
// the 20 messages of history each benchmark run starts from.
func benchAgent() (*Agent, *Session, []Message) {
	at := time.Unix(1, 0)
	a := New(nopClient{}, Config{
		Instructions:     "You are a financial advisor.",
		ContextProviders: []ContextProvider{benchProvider{}},
		Now:              func() time.Time { return at },
		NewID:            func() string { return "id" },
	})
	history := make([]Message, 20)
	for i := range history {
		history[i] = Message{ID: fmt.Sprint(i), Role: RoleUser, Text: "message", CreatedAt: at}
	}
	sess, _ := NewSession("s", "u")
	return a, sess, history
}

// BenchmarkRun measures the agent's own overhead for one run over a
// 20-message session with one context provider; the model answers at once.
func BenchmarkRun(b *testing.B) {
	a, sess, history := benchAgent()
	input := UserText("What did we decide about my 401k?")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		sess.messages = history[:20:20] // reset without copying: the run appends past cap.
		if _, err := a.Run(ctx, sess, input); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunStream is BenchmarkRun through RunStream, consumed to the
// end: the streaming path's own overhead (nopClient does not stream, so
// each answer arrives as one delta).
func BenchmarkRunStream(b *testing.B) {
	a, sess, history := benchAgent()
	input := UserText("What did we decide about my 401k?")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		sess.messages = history[:20:20]
		var resp *Response
		for d, err := range a.RunStream(ctx, sess, input) {
			if err != nil {
				b.Fatal(err)
			}
			resp = d.Response
		}
		if resp == nil {
			b.Fatal("no response")
		}
	}
}
