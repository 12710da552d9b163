package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/cosmostest"
)

func noEnv(string) (string, bool) { return "", false }

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestDemoRunsOfflineWithMemory(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, quiet(), filepath.Join(t.TempDir(), "m.db"), false, noEnv, all))
	got := out.String()
	assert.Contains(t, got, "offline client (no LLM")
	one, two, three := scenario(t, got, 1), scenario(t, got, 2), scenario(t, got, 3)

	// 1: a long past conversation, reached through retrieval.
	assert.Contains(t, one, "a past conversation of 24 turns imported and ended: 3 interaction documents")
	assert.Contains(t, one, "turns 21-24")
	assert.Contains(t, one, "tool call: retrieve_user_facts")
	assert.Regexp(t, `assistant: From memory: .*\$40,000`, one, "the answer comes from the imported conversation")

	// 2: reflection, the profile, and a fresh session that starts with it.
	assert.Regexp(t, `reflection: [1-9]\d* session insights`, two)
	assert.Contains(t, two, "[demographics, confidence 0.90, medium] The user said: \"I'm 35, married to Sarah")
	assert.Contains(t, two, "[concern, confidence")
	assert.Regexp(t, `long-term profile \([1-9]\d* insights folded in\): .*retire at 60`, two)
	assert.Contains(t, two, "memory:    injected 1 profile, 2 session summaries", "the fresh session starts with the profile")

	// 3: compression.
	assert.Equal(t, 2, strings.Count(three, "tool call: financial_glossary"))
	assert.Contains(t, three, "A Roth IRA is an individual retirement account")
	assert.Contains(t, three, "memory: turns 1-10 stored as one interaction")
	assert.Contains(t, three, "9 active turns")
	assert.Contains(t, three, "1 cumulative summary, 5 active turns", "after the prune the summary joins the context")
	assert.Contains(t, three, "memory: session ended; summary:")

	// The same run gives the same output: the demo is deterministic offline.
	var again bytes.Buffer
	require.NoError(t, run(context.Background(), &again, quiet(), filepath.Join(t.TempDir(), "m.db"), false, noEnv, all))
	assert.Equal(t, stripPath(got), stripPath(again.String()))
}

// varying matches what differs between two runs: wall-clock dates, random
// session-derived ids, and token counts that include them.
var varying = regexp.MustCompile(`\d{4}-\d\d-\d\d( \d\d:\d\d UTC)?|(int|ins)-[0-9a-f]+|\(\d+ of \d+ tokens\)`)

// stripPath drops the line naming the temporary database file and masks
// what varies between runs. Answers read from memory are compared as bags
// of words: retrieval breaks ties between equally scored memories by id,
// and ids derive from the random session ids, so their order may vary.
func stripPath(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "memory: SQLite file") {
			continue
		}
		l = varying.ReplaceAllString(l, "X")
		if rest, ok := strings.CutPrefix(l, "assistant: From memory: "); ok {
			words := strings.Fields(rest)
			sort.Strings(words)
			l = "assistant: From memory: " + strings.Join(words, " ")
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}

func TestDemoRejectsBrokenModelConfig(t *testing.T) {
	env := map[string]string{"AZURE_OPENAI_ENDPOINT": "https://example.openai.azure.com"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	err := run(context.Background(), io.Discard, quiet(), filepath.Join(t.TempDir(), "m.db"), false, lookup, all)
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
	require.NoError(t, run(context.Background(), &out, quiet(), filepath.Join(t.TempDir(), "unused.db"), false, lookup, all))
	got := out.String()
	assert.Contains(t, got, "memory: Azure Cosmos DB "+endpoint+", database "+env["AZURE_COSMOS_DATABASE"])
	assert.Contains(t, got, "memory: turns 1-10 stored as one interaction")
	assert.Regexp(t, `assistant: From memory: .*\$40,000`, got, "retrieval found the imported conversation on Cosmos")
	assert.Contains(t, got, "memory:    injected 1 profile", "reflection ran on Cosmos")
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

func TestDemoRunsOneScenario(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, quiet(), filepath.Join(t.TempDir(), "m.db"), false, noEnv, []int{3}))
	assert.NotContains(t, out.String(), "== Scenario 1")
	assert.Contains(t, out.String(), "== Scenario 3")
	err := run(context.Background(), io.Discard, quiet(), filepath.Join(t.TempDir(), "m.db"), false, noEnv, []int{4})
	require.ErrorContains(t, err, "no scenario 4")
}
