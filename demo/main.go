// Command demo runs a financial advisor with long-term memory on the
// embedded default: one SQLite file, no keys, no network. Run it with
//
//	go run ./demo [-scenario N] [-offline] [-db file] [-v]
//
// # Models
//
// With no model configured it uses llm/offline, the deterministic "no LLM"
// client, for memory's own work (metadata, summaries, reflection) and the
// lexical embedder, and says so. No model writes the advisor's replies
// then: for each message the demo shows the memory a model would receive —
// the memory block injected before it and the memories retrieved for it,
// with their citations — and checks that the scenario's fact is in it.
// Without a model to call retrieve_user_facts, memory retrieves for every
// message itself (provider.RetrievalAuto). With OPENAI_API_KEY,
// OPENAI_BASE_URL or AZURE_OPENAI_ENDPOINT set (see docs/library.md) that model
// writes the replies and calls the tools.
//
// # Scenarios
//
// It plays three scenarios, each with a heading, the claim it
// demonstrates, and the evidence:
//
//  1. long context with memory retrieval: a past conversation of 24 turns
//     is imported and ended (pruned into interaction documents with
//     metadata, summarised); a new session asks about it, and the 401k
//     decision taken then reaches the model, with its citation;
//  2. reflection-powered initialization: the finished sessions are
//     reflected on (insights with categories and confidence), the insights
//     folded into the long-term profile, and a fresh session starts with
//     that profile (goal, concern) and the last sessions in its context;
//  3. real-time context compression: a 15-turn conversation in which the
//     memory keeper prunes the first 10 turns into an interaction and a
//     cumulative summary, keeping the last 5 in context; a question about
//     a pruned fact is answered from memory.
//
// The clock is simulated (the story runs from January to June 2025) and
// ids are numbered, so that offline every run prints the same.
//
// -scenario N runs one of them; the earlier scenarios' conversations are
// run first, without their output, since each builds on the last.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/stack"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/tokens"
)

func main() {
	offlineFlag := flag.Bool("offline", false, "use the offline no-LLM client even if a model is configured")
	dbPath := flag.String("db", "", "SQLite memory file (default: a temporary file, removed at exit)")
	verbose := flag.Bool("v", false, "log at debug level (shows every context manifest)")
	only := flag.Int("scenario", 0, "run only this scenario (1, 2 or 3; the earlier ones' conversations run first, unshown); 0 runs all three in order")
	flag.Parse()
	scenarios := []int{1, 2, 3}
	if *only != 0 {
		scenarios = []int{*only}
	}

	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	opts := options{
		logger:       slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})),
		dbPath:       *dbPath,
		forceOffline: *offlineFlag,
		lookup:       os.LookupEnv,
		scenarios:    scenarios,
	}
	if opts.dbPath == "" {
		dir, err := os.MkdirTemp("", "agentmemory-demo")
		if err != nil {
			fmt.Fprintln(os.Stderr, "demo:", err)
			os.Exit(1)
		}
		defer os.RemoveAll(dir)
		opts.dbPath, opts.tempDB = filepath.Join(dir, "memory.db"), true
	}
	if err := run(context.Background(), os.Stdout, opts); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// options are what a run of the demo is given.
type options struct {
	logger *slog.Logger
	// dbPath is the SQLite file; tempDB says the demo made it (the output
	// then does not name it, so that every run prints the same).
	dbPath       string
	tempDB       bool
	forceOffline bool
	lookup       func(string) (string, bool)
	// scenarios to show, in order.
	scenarios []int
}

const userID = "demo-client"

func run(ctx context.Context, w io.Writer, o options) error {
	for _, n := range o.scenarios {
		if n < 1 || n > 3 {
			return fmt.Errorf("no scenario %d (there are 1, 2 and 3)", n)
		}
	}
	m, err := stack.ModelsFromEnv(o.lookup, o.forceOffline)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "agentmemory demo — using the %s\n", m.Description)
	st, desc, err := stack.OpenStore(ctx, o.lookup, o.dbPath, m.Embedder.Dimensions(), o.logger)
	if err != nil {
		return err
	}
	defer st.Close()
	if o.tempDB {
		desc = "a temporary SQLite file, removed at exit (-db keeps one)"
	}
	fmt.Fprintf(w, "memory: %s\n", desc)

	clock := newSimClock(timeline.pastSession)
	ids := &idSeq{}
	cfg := provider.Config{Chat: m.Chat, Mini: m.Mini, Embedder: m.Embedder, Logger: o.logger, Now: clock.Now}
	advisorModel := m.Chat
	if m.Offline {
		// No model decides to call retrieve_user_facts: memory retrieves
		// for every message that needs it, and the advisor has no voice.
		cfg.Retrieval = provider.RetrievalAuto
		advisorModel = noReply{}
	}
	mem, err := provider.New(st, cfg)
	if err != nil {
		return err
	}
	defer mem.Close(ctx)
	if err := startOver(ctx, w, st, mem); err != nil {
		return err
	}
	if m.Offline {
		fmt.Fprint(w, offlineIntro)
	}
	fmt.Fprintln(w)

	glossary, err := agent.NewFuncTool("financial_glossary", "Explain a personal-finance term (IRA, 401k, index fund, emergency fund…).", lookupTerm)
	if err != nil {
		return err
	}
	seen := &witness{}
	d := &demo{w: w, st: st, mem: mem, clock: clock, ids: ids, seen: seen, offline: m.Offline, counter: &tokens.BPE{},
		advisor: agent.New(advisorModel, agent.Config{
			Name:             "advisor",
			Instructions:     "You are a careful, friendly financial advisor. Use the financial_glossary tool to explain terms.",
			Tools:            []agent.Tool{glossary},
			ContextProviders: []agent.ContextProvider{mem, seen},
			Logger:           o.logger,
			Now:              clock.Now,
			NewID:            ids.next,
		})}

	// Each scenario builds on the memory the earlier ones left: run their
	// conversations first, without their output.
	if first := o.scenarios[0]; first > 1 {
		earlier := "scenario 1 leaves: running its conversations"
		if first == 3 {
			earlier = "scenarios 1 and 2 leave: running their conversations"
		}
		fmt.Fprintf(w, "Scenario %d builds on the memory %s first (output not shown).\n\n", first, earlier)
		d.w = io.Discard
		for n := 1; n < first; n++ {
			if err := d.play(ctx, n); err != nil {
				return fmt.Errorf("scenario %d (run first for scenario %d): %w", n, first, err)
			}
		}
		d.w = w
	}
	for _, n := range o.scenarios {
		if err := d.play(ctx, n); err != nil {
			return fmt.Errorf("scenario %d: %w", n, err)
		}
	}
	return nil
}

const offlineIntro = `
No model is configured, so nothing writes the advisor's replies. For each
message the demo shows the memory a model would receive: the memory block
injected before it and the memories retrieved for it, each with its
citation. With no model to call retrieve_user_facts, memory retrieves for
every message that needs it (automatic retrieval). The clock is simulated,
so every run prints the same.
`

// startOver forgets what an earlier run left in a reused memory file (or
// Cosmos DB database): the demo's story starts from an empty memory.
func startOver(ctx context.Context, w io.Writer, st store.Store, mem *provider.MemoryProvider) error {
	old, err := st.ListSessions(ctx, userID, store.SessionFilter{})
	if err != nil {
		return fmt.Errorf("read earlier memory: %w", err)
	}
	if len(old) == 0 {
		return nil
	}
	if _, err := mem.ForgetUser(ctx, userID); err != nil {
		return fmt.Errorf("forget the earlier run's memory: %w", err)
	}
	fmt.Fprintf(w, "memory: forgot what an earlier run left for %s (%d sessions); the story starts over\n", userID, len(old))
	return nil
}

type termQuery struct {
	Term string `json:"term" jsonschema:"the term to explain, or a question containing it"`
}

var glossary = []struct{ keys, text string }{
	{"roth ira", "A Roth IRA is an individual retirement account funded with after-tax money; qualified withdrawals in retirement are tax-free."},
	{"401k|401(k)", "A 401(k) is an employer-sponsored retirement plan funded from pre-tax pay, often with an employer match."},
	{"index fund", "An index fund holds the securities of a market index, giving broad diversification at low cost."},
	{"emergency fund", "An emergency fund is cash set aside for three to six months of expenses, kept in a safe, liquid account."},
}

// lookupTerm finds the first glossary entry whose term appears in the query.
func lookupTerm(_ context.Context, q termQuery) (string, error) {
	text := strings.ToLower(q.Term)
	for _, e := range glossary {
		for _, k := range strings.Split(e.keys, "|") {
			if strings.Contains(text, k) {
				return e.text, nil
			}
		}
	}
	return "", fmt.Errorf("no glossary entry for %q", q.Term)
}
