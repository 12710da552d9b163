// Command demo runs a financial advisor with long-term memory on the
// embedded default: one SQLite file, no keys, no network.
//
// With no model configured it uses llm/offline, the deterministic "no LLM"
// client, and the lexical embedder, and says so. With OPENAI_API_KEY,
// OPENAI_BASE_URL or AZURE_OPENAI_ENDPOINT set (see README) it uses that
// model and embedder instead.
//
// The demo holds two sessions with the same client: the first is long
// enough for the memory keeper to prune turns into an interaction document
// and a cumulative summary; the second starts with the first's summary in
// its context. It prints what memory injected at each step.
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
	"github.com/agentmemory/agentmemory/keeper"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
)

func main() {
	offlineFlag := flag.Bool("offline", false, "use the offline no-LLM client even if a model is configured")
	dbPath := flag.String("db", "", "SQLite memory file (default: a temporary file, removed at exit)")
	verbose := flag.Bool("v", false, "log at debug level (shows every context manifest)")
	flag.Parse()

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
	if err := run(context.Background(), os.Stdout, logger, path, *offlineFlag, os.LookupEnv); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

const userID = "demo-client"

func run(ctx context.Context, w io.Writer, logger *slog.Logger, dbPath string, forceOffline bool, lookup func(string) (string, bool)) error {
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
	advisor := agent.New(m.Chat, agent.Config{
		Name:             "advisor",
		Instructions:     "You are a careful, friendly financial advisor. Use the financial_glossary tool to explain terms.",
		Tools:            []agent.Tool{glossary},
		ContextProviders: []agent.ContextProvider{mem},
		Logger:           logger,
	})

	fmt.Fprintln(w, "== Session 1: getting to know the client (12 turns; memory prunes every 10)")
	first, err := advisor.NewUserSession(userID)
	if err != nil {
		return err
	}
	if err := converse(ctx, w, advisor, mem, first, sessionOne); err != nil {
		return err
	}
	if err := mem.Flush(ctx); err != nil {
		return err
	}
	docs, err := st.ListInteractions(ctx, userID, store.InteractionFilter{SessionID: first.ID()})
	if err != nil {
		return err
	}
	for _, d := range docs {
		fmt.Fprintf(w, "memory: turns %d-%d stored as one interaction; topics %s; entities %s\n",
			d.FirstTurn, d.LastTurn, strings.Join(d.Metadata.MentionedTopics, ", "), strings.Join(d.Metadata.Entities, ", "))
	}
	res, err := mem.EndSession(ctx, first)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "memory: session 1 ended; summary: %s\n\n", res.Session.Summary)

	fmt.Fprintln(w, "== Session 2: a new conversation starts with what memory kept")
	second, err := advisor.NewUserSession(userID)
	if err != nil {
		return err
	}
	if err := converse(ctx, w, advisor, mem, second, sessionTwo); err != nil {
		return err
	}
	if _, err := mem.EndSession(ctx, second); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nReflection (insights, the long-term profile) is not built yet; see README.")
	return nil
}

func converse(ctx context.Context, w io.Writer, a *agent.Agent, mem *provider.MemoryProvider, sess *agent.Session, lines []string) error {
	for _, q := range lines {
		fmt.Fprintf(w, "user:      %s\n", q)
		resp, err := a.Run(ctx, sess, agent.UserText(q))
		if err != nil {
			return fmt.Errorf("run: %w", err)
		}
		// Memory work runs in the background; the demo waits for it after
		// each turn so that what it prints is the same on every run.
		if err := mem.Flush(ctx); err != nil {
			return err
		}
		if man, ok := mem.LastManifest(sess); ok {
			fmt.Fprintf(w, "memory:    %s\n", describe(man))
		}
		for _, m := range resp.Messages {
			for _, tc := range m.ToolCalls {
				fmt.Fprintf(w, "tool call: %s\n", tc.Name)
			}
		}
		fmt.Fprintf(w, "assistant: %s\n", resp.Text())
	}
	return nil
}

// describe summarises a context manifest in one line.
func describe(m keeper.Manifest) string {
	counts := map[string]int{}
	for _, it := range m.Items {
		counts[it.Kind]++
	}
	return fmt.Sprintf("injected %d profile, %d session summaries, %d cumulative summary, %d active turns (%d of %d tokens)",
		counts[keeper.ItemProfile], counts[keeper.ItemSessionSummary], counts[keeper.ItemCumulativeSummary], counts[keeper.ItemTurn], m.Tokens, m.Budget)
}

var sessionOne = []string{
	"Hi! I'm 35, married, and I want to retire at 60.",
	"I have an old 401k from Acme with about $40,000 in it.",
	"Can you check the financial glossary: what is a Roth IRA?",
	"I can put aside $500 a month for retirement.",
	"I'm nervous about market volatility; I lost money in 2022.",
	"We also want an emergency fund before buying a house in 2028.",
	"One more from the financial glossary: what is an emergency fund?",
	"My wife Sarah has her own 401k at Fidelity.",
	"I prefer low-cost index funds over picking stocks.",
	"Should I roll the Acme 401k into an IRA?",
	"Let's plan to review this every quarter.",
	"Thanks, that's all for today.",
}

var sessionTwo = []string{
	"Hello again! Where did we leave my 401k rollover?",
	"How much did I say I could put aside each month?",
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
