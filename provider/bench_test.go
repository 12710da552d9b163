package provider_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/llm/offline"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// instant is a main model that answers at once, so that a run's cost is
// the agent's and the memory's.
type instant struct{}

func (instant) Complete(context.Context, *agent.ChatRequest) (*agent.ChatResponse, error) {
	return &agent.ChatResponse{Message: agent.Message{Role: agent.RoleAssistant, Text: "Noted."}}, nil
}

// BenchmarkRunWithMemory measures one run of an agent with the memory
// provider over a SQLite file: the context injected, the turn written
// durably (one transaction), and pruning every K = 10 turns in the
// background (offline model), drained at the end.
func BenchmarkRunWithMemory(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "m.db"), sqlite.Config{Dimensions: 384})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	mini, err := offline.New(offline.Config{})
	if err != nil {
		b.Fatal(err)
	}
	emb, err := lexical.New(lexical.Config{})
	if err != nil {
		b.Fatal(err)
	}
	mem, err := provider.New(st, provider.Config{Chat: mini, Embedder: emb, Reflection: provider.ReflectManual,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer mem.Close(ctx)
	a := agent.New(instant{}, agent.Config{ContextProviders: []agent.ContextProvider{mem}})
	sess, err := a.NewUserSession("u1")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if _, err := a.Run(ctx, sess, agent.UserText(fmt.Sprintf("Turn %d: I moved $%d into my Roth IRA.", i, i*10))); err != nil {
			b.Fatal(err)
		}
	}
	if err := mem.Flush(ctx); err != nil {
		b.Fatal(err)
	}
}
