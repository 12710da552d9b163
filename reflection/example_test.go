package reflection_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"time"

	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/llm/offline"
	"github.com/agentmemory/agentmemory/reflection"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/mem"
)

// Reflection on a finished session, then the long-term profile, on the
// offline "no LLM" client (rules: it keeps the user's first-person
// statements that fit a category). With a real model the same calls
// extract and synthesise in the model's own words.
func Example() {
	ctx := context.Background()
	st := mem.New(mem.Config{})
	model, _ := offline.New(offline.Config{})
	emb, _ := lexical.New(lexical.Config{})
	r, err := reflection.New(st, reflection.Config{Chat: model, Embedder: emb, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}

	// A session the memory keeper has ended (the provider does this).
	day := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	_ = st.PutSession(ctx, "dana", &store.Session{ID: "s1", StartTime: day, Status: store.SessionCompleted})
	_ = st.PutInteraction(ctx, "dana", &store.Interaction{
		ID: store.InteractionID("s1", 1, 3), SessionID: "s1", Timestamp: day, FirstTurn: 1, LastTurn: 3,
		Content: "user: Hi! I'm 35 and married, with a two-year-old.\n" +
			"assistant: Nice to meet you.\n" +
			"user: I want to retire at 60.\n" +
			"assistant: Let's plan for it.\n" +
			"user: I'm nervous about market volatility. Thanks!\n" +
			"assistant: That's common.",
	})

	res, err := r.ReflectSession(ctx, "dana", "s1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Flag)
	for _, in := range res.Insights {
		fmt.Printf("%s: %s\n", in.Category, in.InsightText)
	}
	prof, err := r.ReflectLongTerm(ctx, "dana")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("profile:", prof.Profile.InsightText)
	// Output:
	// insight
	// financial_goals: The user wants to retire at 60.
	// concern: The user is nervous about market volatility.
	// demographics: The user is 35 and married, with a two-year-old.
	// profile: The user is 35 and married, with a two-year-old. The user wants to retire at 60. The user is nervous about market volatility.
}
