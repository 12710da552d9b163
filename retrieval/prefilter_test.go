package retrieval

import (
	"context"
	"testing"

	"github.com/agentmemory/agentmemory/prompts"
)

func TestNeedsMemory(t *testing.T) {
	skip := []string{"hi", "Hello!", "hey there", "thanks", "Thank you so much!", "ok", "Okay.", "bye", "got it", "👍", "...", "   ",
		"Thanks, that helps a lot.", "Great, thanks!", "OK, got it. Bye!", "That makes sense, thank you.", "Good to know!", "Much appreciated."}
	search := []string{
		"Hi, what's my budget?", "What did I say about my 401k?", "remember the plan?", "Thanks, and how much did we set aside?",
		"What is a Roth IRA?", "ok so what about bonds", "Do you recall the date?", "Thanks, that helps. What about bonds?",
		"Great, thanks! Should the emergency fund sit in a money market?", "Thanks, that helps a lot with the mortgage plan",
	}
	for _, s := range skip {
		if NeedsMemory(s) {
			t.Errorf("NeedsMemory(%q) = true, want a skip", s)
		}
	}
	for _, s := range search {
		if !NeedsMemory(s) {
			t.Errorf("NeedsMemory(%q) = false, want a search", s)
		}
	}
}

func TestIsVague(t *testing.T) {
	for _, s := range []string{"How much?", "And when?", "What about it?", "how much was that", "Why?", "Tell me more about it"} {
		if !IsVague(s) {
			t.Errorf("IsVague(%q) = false", s)
		}
	}
	for _, s := range []string{"What is my monthly savings target for retirement?", "How should I invest the Acme 401k money?"} {
		if IsVague(s) {
			t.Errorf("IsVague(%q) = true", s)
		}
	}
}

func TestRewritePrepend(t *testing.T) {
	r := &Retriever{cfg: Config{Rewrite: RewritePrepend}}
	recent := []prompts.Turn{
		{Role: "user", Text: "I have $40,000 in an old Acme 401k."},
		{Role: "assistant", Text: "You could roll it into an IRA."},
		{Role: "user", Text: "What are the fees for a rollover?"},
		{Role: "assistant", Text: "Usually none."},
	}
	got := r.Rewrite(context.Background(), recent, "And how long does it take?")
	want := "I have $40,000 in an old Acme 401k. What are the fees for a rollover? And how long does it take?"
	if got != want {
		t.Errorf("Rewrite = %q, want %q", got, want)
	}
	standalone := "How should I invest the Acme 401k money?"
	if got := r.Rewrite(context.Background(), recent, standalone); got != standalone {
		t.Errorf("a standalone question was rewritten: %q", got)
	}
	r.cfg.Rewrite = RewriteOff
	if got := r.Rewrite(context.Background(), recent, "And when?"); got != "And when?" {
		t.Errorf("RewriteOff rewrote: %q", got)
	}
}

func FuzzNeedsMemory(f *testing.F) {
	for _, s := range []string{"hi", "what's my budget?", "", "\xff", "ok ok ok", "I"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		NeedsMemory(s)
		IsVague(s)
	})
}
