// Command demo runs a financial advisor with long-term memory on the
// embedded default: one SQLite file, no keys, no network.
//
// With no model configured it uses llm/offline, the deterministic "no LLM"
// client, and the lexical embedder, and says so. With OPENAI_API_KEY,
// OPENAI_BASE_URL or AZURE_OPENAI_ENDPOINT set (see README) it uses that
// model and embedder instead.
//
// It plays the three scenarios of the design with one client, printing
// what memory stored and injected at each step:
//
//  1. long context with memory retrieval: a past conversation of 24 turns
//     is imported and ended (pruned into interaction documents with
//     metadata, summarised); a new session asks about it, and the advisor
//     finds the answer with the retrieve_user_facts tool;
//  2. reflection-powered initialization: the finished sessions are
//     reflected on (insights with categories and confidence), the insights
//     folded into the long-term profile, and a fresh session starts with
//     that profile in its context;
//  3. real-time context compression: a 15-turn conversation in which the
//     memory keeper prunes the first 10 turns into an interaction and a
//     cumulative summary, keeping the last 5 in context.
//
// -scenario N runs one of them alone (scenario 2 then reflects on
// whatever sessions the memory file already holds).
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
)

func main() {
	offlineFlag := flag.Bool("offline", false, "use the offline no-LLM client even if a model is configured")
	dbPath := flag.String("db", "", "SQLite memory file (default: a temporary file, removed at exit)")
	verbose := flag.Bool("v", false, "log at debug level (shows every context manifest)")
	only := flag.Int("scenario", 0, "run only this scenario (1, 2 or 3); 0 runs all three in order")
	flag.Parse()
	scenarios := []int{1, 2, 3}
	if *only != 0 {
		scenarios = []int{*only}
	}

	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	path := *dbPath
	if path == "" {
		dir, err := os.MkdirTemp("", "agentmemory-demo")
		if err != nil {
			fmt.Fprintln(os.Stderr, "demo:", err)
			os.Exit(1)
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "memory.db")
	}
	if err := run(context.Background(), os.Stdout, logger, path, *offlineFlag, os.LookupEnv, scenarios); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

const userID = "demo-client"

func run(ctx context.Context, w io.Writer, logger *slog.Logger, dbPath string, forceOffline bool, lookup func(string) (string, bool), scenarios []int) error {
	m, err := stack.ModelsFromEnv(lookup, forceOffline)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "agentmemory demo — using the %s\n", m.Description)
	st, desc, err := stack.OpenStore(ctx, lookup, dbPath, m.Embedder.Dimensions(), logger)
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintf(w, "memory: %s\n\n", desc)
	mem, err := provider.New(st, provider.Config{Chat: m.Chat, Mini: m.Mini, Embedder: m.Embedder, Logger: logger})
	if err != nil {
		return err
	}
	defer mem.Close(ctx)

	glossary, err := agent.NewFuncTool("financial_glossary", "Explain a personal-finance term (IRA, 401k, index fund, emergency fund…).", lookupTerm)
	if err != nil {
		return err
	}
	d := &demo{w: w, st: st, mem: mem, advisor: agent.New(m.Chat, agent.Config{
		Name:             "advisor",
		Instructions:     "You are a careful, friendly financial advisor. Use the financial_glossary tool to explain terms.",
		Tools:            []agent.Tool{glossary},
		ContextProviders: []agent.ContextProvider{mem},
		Logger:           logger,
	})}
	for _, n := range scenarios {
		var err error
		switch n {
		case 1:
			err = d.longContext(ctx)
		case 2:
			err = d.reflectionInit(ctx)
		case 3:
			err = d.compression(ctx)
		default:
			err = fmt.Errorf("no scenario %d (there are 1, 2 and 3)", n)
		}
		if err != nil {
			return fmt.Errorf("scenario %d: %w", n, err)
		}
	}
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
