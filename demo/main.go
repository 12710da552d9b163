// Command demo runs a short financial-advisor conversation through the agent
// core.
//
// With no configuration it runs offline on llm/offline, the deterministic
// "no LLM" client, and says so. With OPENAI_API_KEY, OPENAI_BASE_URL or
// AZURE_OPENAI_ENDPOINT set (see README) it uses that model instead.
//
// The memory scenarios (long-context retrieval, reflection-powered session
// initialisation, context compression) arrive with the memory provider; this
// demo shows the agent, a typed tool and the model clients working together.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/llm/offline"
	"github.com/agentmemory/agentmemory/llm/openai"
)

func main() {
	offlineFlag := flag.Bool("offline", false, "use the offline no-LLM client even if a model is configured")
	verbose := flag.Bool("v", false, "log at debug level")
	flag.Parse()

	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if err := run(context.Background(), os.Stdout, logger, *offlineFlag, os.LookupEnv); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// chatClient picks the configured model, or the offline client when none is
// configured or forceOffline is set. It never falls back silently: the
// returned description says which one runs.
func chatClient(lookup func(string) (string, bool), forceOffline bool) (agent.ChatClient, string, error) {
	if !forceOffline {
		clients, err := openai.FromEnv(lookup, openai.Config{})
		switch {
		case err == nil:
			return clients.Chat, "model " + clients.Chat.Model(), nil
		case !errors.Is(err, openai.ErrNotConfigured):
			return nil, "", fmt.Errorf("model configuration: %w", err)
		}
	}
	c, err := offline.New(offline.Config{})
	if err != nil {
		return nil, "", err
	}
	return c, "offline client (no LLM: deterministic rules, no network)", nil
}

func run(ctx context.Context, w io.Writer, logger *slog.Logger, forceOffline bool, lookup func(string) (string, bool)) error {
	client, desc, err := chatClient(lookup, forceOffline)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "agentmemory demo — using the %s\n\n", desc)

	glossary, err := agent.NewFuncTool("financial_glossary", "Explain a personal-finance term (IRA, 401k, index fund, emergency fund…).", lookupTerm)
	if err != nil {
		return err
	}
	advisor := agent.New(client, agent.Config{
		Name:         "advisor",
		Instructions: "You are a careful, friendly financial advisor. Use the financial_glossary tool to explain terms.",
		Tools:        []agent.Tool{glossary},
		Logger:       logger,
	})
	sess, err := advisor.NewUserSession("demo-user")
	if err != nil {
		return err
	}
	for _, q := range []string{
		"Hi! I'm 35 and I want to retire at 60.",
		"Can you check the financial glossary: what is a Roth IRA?",
		"One more from the financial glossary: what is an emergency fund?",
	} {
		fmt.Fprintf(w, "user:      %s\n", q)
		resp, err := advisor.Run(ctx, sess, agent.UserText(q))
		if err != nil {
			return fmt.Errorf("run: %w", err)
		}
		for _, m := range resp.Messages {
			for _, tc := range m.ToolCalls {
				fmt.Fprintf(w, "tool call: %s\n", tc.Name)
			}
		}
		fmt.Fprintf(w, "assistant: %s\n\n", resp.Text())
	}
	fmt.Fprintf(w, "session %s holds %d messages\n", sess.ID(), sess.Len())
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
