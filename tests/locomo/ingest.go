package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/stack"
	"github.com/agentmemory/agentmemory/keeper"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/retrieval"
	"github.com/agentmemory/agentmemory/store"
)

// clock is the provider's clock: the date of the session being recorded.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// memory is the system under test: the store, the provider that writes it
// and the retriever that searches it.
type memory struct {
	st    store.Store
	prov  *provider.MemoryProvider
	ret   *retrieval.Retriever
	clock *clock
	model string
	turns int
	log   *slog.Logger
}

// openMemory opens the store stack.OpenStore picks (Azure Cosmos DB when
// AZURE_COSMOS_ENDPOINT is set, else a SQLite file in dir) and the provider
// and retriever on it.
func openMemory(ctx context.Context, lookup func(string) (string, bool), dir string, m *stack.Models, turns int, logger *slog.Logger) (*memory, string, error) {
	st, desc, err := stack.OpenStore(ctx, lookup, filepath.Join(dir, "locomo.db"), m.Embedder.Dimensions(), logger)
	if err != nil {
		return nil, "", err
	}
	clk := &clock{t: time.Now().UTC()}
	// Reflection stays off: the metric scores the turn ids of what is
	// retrieved, which insights (provenance: sessions and interactions) do
	// not carry, and the default insight categories are the financial
	// advisor's.
	prov, err := provider.New(st, provider.Config{Mini: m.Mini, Embedder: m.Embedder, KeeperConfig: keeper.Config{K: turns}, Reflection: provider.ReflectManual, Logger: logger, Now: clk.now})
	if err != nil {
		st.Close()
		return nil, "", err
	}
	ret, err := retrieval.New(st, retrieval.Config{Embedder: m.Embedder, Logger: logger})
	if err != nil {
		prov.Close(ctx)
		st.Close()
		return nil, "", err
	}
	return &memory{st: st, prov: prov, ret: ret, clock: clk, model: m.Embedder.Model(), turns: turns, log: logger}, desc, nil
}

func (m *memory) close(ctx context.Context) {
	if err := m.prov.Close(ctx); err != nil {
		m.log.Warn("locomo: close provider", "err", err)
	}
	if err := m.st.Close(); err != nil {
		m.log.Warn("locomo: close store", "err", err)
	}
}

func userOf(c *conversation) string { return "locomo-" + c.name }

func sessionOf(c *conversation, s session) string { return fmt.Sprintf("locomo-%s-s%d", c.name, s.n) }

// ingestStats tells what ingest did.
type ingestStats struct {
	reused       bool
	interactions int
	elapsed      time.Duration
}

// ingest records conversation c as its user's memory, or reuses what an
// earlier run left in the same file when it is complete and made the same
// way.
func (m *memory) ingest(ctx context.Context, c *conversation) (ingestStats, error) {
	start := time.Now()
	user := userOf(c)
	ok, err := m.complete(ctx, c)
	if err != nil {
		return ingestStats{}, err
	}
	if ok {
		n, err := m.count(ctx, user)
		return ingestStats{reused: true, interactions: n, elapsed: time.Since(start)}, err
	}
	if err := m.st.DeleteUser(ctx, user); err != nil {
		return ingestStats{}, fmt.Errorf("clear earlier memory: %w", err)
	}
	roles := map[string]agent.Role{c.speakerA: agent.RoleUser, c.speakerB: agent.RoleAssistant}
	for _, s := range c.sessions {
		if len(s.turns) == 0 {
			continue
		}
		m.clock.set(s.time)
		sess, err := agent.NewSession(sessionOf(c, s), user)
		if err != nil {
			return ingestStats{}, err
		}
		if err := m.prov.StartSession(ctx, sess); err != nil {
			return ingestStats{}, err
		}
		for _, t := range s.turns {
			role, known := roles[t.Speaker]
			if !known {
				return ingestStats{}, fmt.Errorf("session_%d %s: speaker %q is neither speaker_a nor speaker_b", s.n, t.DiaID, t.Speaker)
			}
			msg := agent.Message{ID: t.DiaID, Role: role, Name: t.Speaker, Text: messageText(t), CreatedAt: s.time}
			if msg.Text == "" {
				continue
			}
			if err := m.prov.Record(ctx, sess, msg); err != nil {
				return ingestStats{}, fmt.Errorf("session_%d %s: %w", s.n, t.DiaID, err)
			}
		}
		// Background prunes of this session finish before the clock moves
		// on, so every document of the session carries its date.
		if err := m.prov.Flush(ctx); err != nil {
			return ingestStats{}, err
		}
		if _, err := m.prov.EndSession(ctx, sess); err != nil {
			return ingestStats{}, fmt.Errorf("session_%d: %w", s.n, err)
		}
	}
	if err := m.prov.Flush(ctx); err != nil {
		return ingestStats{}, err
	}
	n, err := m.count(ctx, user)
	return ingestStats{interactions: n, elapsed: time.Since(start)}, err
}

func (m *memory) count(ctx context.Context, user string) (int, error) {
	docs, err := m.st.ListInteractions(ctx, user, store.InteractionFilter{})
	return len(docs), err
}

// complete reports whether the store already holds conversation c, fully
// ingested with the same embedder and turns per interaction.
func (m *memory) complete(ctx context.Context, c *conversation) (bool, error) {
	user := userOf(c)
	done, err := m.st.ListSessions(ctx, user, store.SessionFilter{Status: store.SessionCompleted})
	if err != nil {
		return false, err
	}
	want := 0
	for _, s := range c.sessions {
		if len(s.turns) > 0 {
			want++
		}
	}
	if len(done) != want {
		return false, nil
	}
	for _, d := range done {
		if d.EmbeddingModel != m.model {
			return false, nil
		}
	}
	first := c.sessions[0]
	docs, err := m.st.ListInteractions(ctx, user, store.InteractionFilter{SessionID: sessionOf(c, first)})
	if err != nil || len(docs) == 0 {
		return false, err
	}
	return len(docs[0].TurnIDs) == min(m.turns, len(first.turns)), nil
}
