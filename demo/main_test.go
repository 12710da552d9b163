package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/cosmostest"
)

func noEnv(string) (string, bool) { return "", false }

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// offlineRun runs the demo offline on a fresh temporary file and returns
// its output.
func offlineRun(t *testing.T, scenarios ...int) string {
	t.Helper()
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, options{
		logger: quiet(), dbPath: filepath.Join(t.TempDir(), "m.db"), tempDB: true, lookup: noEnv, scenarios: scenarios,
	}))
	return out.String()
}

func TestDemoShowsEachScenarioClaimOffline(t *testing.T) {
	got := offlineRun(t, 1, 2, 3)
	assert.Contains(t, got, "offline client (no LLM")
	assert.Contains(t, got, "nothing writes the advisor's replies")
	assert.NotContains(t, got, "From memory:", "no imitation of a model's answer")
	assert.NotContains(t, got, "assistant:", "offline, nothing answers as the assistant")
	one, two, three := flat(scenario(t, got, 1)), flat(scenario(t, got, 2)), flat(scenario(t, got, 3))

	// 1: a long past conversation; its decision reaches a new session, cited.
	assert.Contains(t, one, "a past conversation of 24 turns (session demo-001) is imported and ended: 3 interaction documents")
	assert.Contains(t, one, "turns 21-24")
	assert.Contains(t, one, "user 1: What did we discuss about my 401k? context: 1 session summary, no earlier turns",
		"none of the old turns is in the new session's context")
	decision := "Noted: a direct rollover of the Acme 401k into a traditional IRA in March."
	assert.Contains(t, memoryBlock(t, one), "### Recent Session Summaries - 2025-01-14 10:02 UTC: ")
	assert.Contains(t, memoryBlock(t, one), decision, "the injected session summary holds the decision")
	assert.Contains(t, one, `evidence: the 401k decision — "`+decision+`" [session summary demo-001, 2025-01-14]`)
	assert.Contains(t, one, "advisor: (no reply: no model is configured")

	// 2: reflection, the profile, and a fresh session whose first message
	// reaches the model with the profile's goal and concern and the last
	// session.
	assert.Regexp(t, `reflection: [1-9]\d* session insights`, two)
	assert.Contains(t, two, `[demographics, confidence 0.90, medium] The user said: "I'm 35, married to Sarah`)
	assert.Contains(t, two, `[concern, confidence 0.90, high] The user said: "I'm nervous about market volatility`)
	assert.Regexp(t, `long-term profile \([1-9]\d* insights folded in\): .*retire at 60`, two)
	assert.Contains(t, two, "user 1: Hi, it's me again. Where were we? context: profile, 2 session summaries, no earlier turns")
	block := memoryBlock(t, two)
	keyInsights, recent, ok := strings.Cut(block, "### Recent Session Summaries")
	require.True(t, ok, "the block has recent session summaries: %s", block)
	assert.Contains(t, keyInsights, "### Key Insights")
	assert.Contains(t, keyInsights, "I want to retire at 60", "the profile's goal")
	assert.Contains(t, keyInsights, "I'm nervous about market volatility", "the profile's concern")
	assert.Contains(t, recent, "- 2025-03-04 09:01 UTC: What did we discuss about my 401k?", "the last session, scenario 1's question")
	assert.Contains(t, two, `evidence: the goal — "The user said: \"I want to retire at 60 and I'm not sure I'm saving enough.\"" [profile longterm-demo-client, 2025-04-07]`)
	assert.Contains(t, two, `evidence: the concern — "The user said: \"I'm nervous about market volatility; I lost money in 2022.\"" [profile longterm-demo-client, 2025-04-07]`)
	last := regexp.MustCompile(`evidence: the last session \((demo-\d+), 2025-03-04\) — "What did we discuss about my 401k\?" \[session summary (demo-\d+), 2025-03-04\]`).FindStringSubmatch(two)
	require.NotNil(t, last, "the last session's summary is cited: %s", two)
	assert.Equal(t, last[1], last[2], "cited from the last session itself")

	// 3: compression. The first ten turns are pruned into one interaction
	// and the cumulative summary, which holds the raise.
	prune := regexp.MustCompile(`memory: prune: turns 1-10 pruned into interaction (int-[0-9a-f]+)`).FindStringSubmatch(three)
	require.NotNil(t, prune, "the prune is shown: %s", three)
	cumulative := regexp.MustCompile(`memory: cumulative summary now: (.*?) user 11:`).FindStringSubmatch(three)
	require.NotNil(t, cumulative, "the cumulative summary is shown after the prune: %s", three)
	assert.Contains(t, cumulative[1], "Sarah got a raise at the hospital, so her salary is now $80,000 a year.")
	assert.Contains(t, three, "memory: session end: turns 11-15 pruned into interaction int-")
	assert.Contains(t, three, "user 11: Could we afford a family trip to Portugal next summer? context: profile, 2 session summaries, conversation summary, turns 6-10")
	// The pruned-fact question: turn 4 is out of the context, the raise is
	// in its summary and in the retrieved interaction.
	probe := regexp.MustCompile(`user 14: What should I do with Sarah's raise\? context: profile, 2 session summaries, conversation summary, turns 9-13 — (\d+) tokens \(full history (\d+)\)`).FindStringSubmatch(three)
	require.NotNil(t, probe, "the pruned-fact question's context: %s", three)
	assert.Less(t, atoi(t, probe[1]), atoi(t, probe[2]), "the context is smaller than the full history")
	_, summary, _ := strings.Cut(memoryBlock(t, three), "### Conversation Summary")
	assert.Contains(t, summary, "$80,000")
	assert.Contains(t, three, `evidence: the raise (said in turn 4, pruned since) — "Big news: Sarah got a raise at the hospital, so her salary is now $80,000 a year." [summary of this conversation] [`+prune[1]+`, 2025-06-10, conversation]`)
	final := regexp.MustCompile(`tokens: the last message's context held this conversation as its summary and turns 10-14: (\d+) tokens, where its full history, turns 1-14, takes (\d+) \(the whole context: (\d+) of 2000 tokens; with the full history instead: (\d+)\)`).FindStringSubmatch(three)
	require.NotNil(t, final, "the closing token comparison: %s", three)
	assert.Less(t, atoi(t, final[1]), atoi(t, final[2]))
	assert.Less(t, atoi(t, final[3]), atoi(t, final[4]))
	assert.Contains(t, three, "user 15: Thanks, that helps a lot.")

	// Every run prints the same, byte for byte.
	assert.Equal(t, got, offlineRun(t, 1, 2, 3), "two runs differ")

	t.Run("each scenario alone", func(t *testing.T) {
		// A scenario alone on a fresh file runs the earlier ones'
		// conversations first, and then prints what the full run prints.
		for _, n := range []int{2, 3} {
			alone := offlineRun(t, n)
			assert.NotContains(t, alone, "== Scenario 1")
			assert.Contains(t, alone, fmt.Sprintf("Scenario %d builds on the memory scenario", n))
			assert.Equal(t, scenario(t, got, n), scenario(t, alone, n), "scenario %d alone", n)
		}
	})
}

func TestDemoStartsOverOnAReusedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	var first, second bytes.Buffer
	o := options{logger: quiet(), dbPath: path, lookup: noEnv, scenarios: []int{1}}
	require.NoError(t, run(context.Background(), &first, o))
	require.NoError(t, run(context.Background(), &second, o))
	assert.Contains(t, first.String(), "memory: SQLite file "+path)
	assert.NotContains(t, first.String(), "forgot")
	assert.Contains(t, second.String(), "memory: forgot what an earlier run left for demo-client (2 sessions); the story starts over")
	assert.Equal(t, scenario(t, first.String(), 1), scenario(t, second.String(), 1))
}

func TestDemoRejectsBadScenarioAndBrokenModelConfig(t *testing.T) {
	err := run(context.Background(), io.Discard, options{logger: quiet(), dbPath: filepath.Join(t.TempDir(), "m.db"), lookup: noEnv, scenarios: []int{4}})
	require.ErrorContains(t, err, "no scenario 4")

	env := map[string]string{"AZURE_OPENAI_ENDPOINT": "https://example.openai.azure.com"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	err = run(context.Background(), io.Discard, options{logger: quiet(), dbPath: filepath.Join(t.TempDir(), "m.db"), lookup: lookup, scenarios: all})
	require.Error(t, err, "a half-configured model must be reported, not replaced by the offline client")
	assert.Contains(t, err.Error(), "AZURE_OPENAI")
}

func TestDemoRunsOnCosmosWhenConfigured(t *testing.T) {
	endpoint := cosmostest.Endpoint(t) // skips without Node.js or the npm packages (fails in CI)
	env := map[string]string{
		"AZURE_COSMOS_ENDPOINT": endpoint,
		"AZURE_COSMOS_KEY":      cosmostest.Key,
		"AZURE_COSMOS_DATABASE": cosmostest.DatabaseName(t),
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, options{logger: quiet(), dbPath: filepath.Join(t.TempDir(), "unused.db"), lookup: lookup, scenarios: all}))
	got := flat(out.String())
	assert.Contains(t, got, "memory: Azure Cosmos DB "+endpoint+", database "+env["AZURE_COSMOS_DATABASE"])
	assert.Contains(t, got, "memory: prune: turns 1-10 pruned into interaction")
	assert.Contains(t, got, `evidence: the 401k decision — "Noted: a direct rollover of the Acme 401k into a traditional IRA in March."`, "the decision reached the new session on Cosmos")
	assert.Contains(t, got, "context: profile, 2 session summaries", "reflection ran on Cosmos")
	assert.Contains(t, got, `evidence: the raise (said in turn 4, pruned since) — "Big news: Sarah got a raise`)
}

var all = []int{1, 2, 3}

// scenario returns the output of scenario n.
func scenario(t *testing.T, out string, n int) string {
	t.Helper()
	start := strings.Index(out, fmt.Sprintf("== Scenario %d:", n))
	require.GreaterOrEqual(t, start, 0, "scenario %d missing", n)
	rest := out[start+1:]
	if end := strings.Index(rest, "== Scenario "); end >= 0 {
		return out[start : start+1+end]
	}
	return out[start:]
}

// flat collapses runs of whitespace, undoing the demo's line wrapping.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

// memoryBlock returns the first memory block a flattened scenario shows.
func memoryBlock(t *testing.T, s string) string {
	t.Helper()
	_, block, ok := strings.Cut(s, "memory block, as the model receives it: <memory>")
	require.True(t, ok, "no memory block shown: %s", s)
	block, _, ok = strings.Cut(block, "</memory>")
	require.True(t, ok, "the memory block is not closed: %s", s)
	return block
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}
