package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
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
	require.NoError(t, run(context.Background(), &out, quiet(), filepath.Join(t.TempDir(), "m.db"), false, noEnv))
	got := out.String()
	assert.Contains(t, got, "offline client (no LLM")
	assert.Equal(t, 2, strings.Count(got, "tool call: financial_glossary"))
	assert.Contains(t, got, "A Roth IRA is an individual retirement account")
	assert.Contains(t, got, "memory: turns 1-10 stored as one interaction")
	assert.Contains(t, got, "$40,000")
	assert.Contains(t, got, "1 cumulative summary, 5 active turns", "after the prune the summary joins the context")
	assert.Contains(t, got, "memory:    injected 0 profile, 1 session summaries", "session 2 starts with session 1's summary")

	// The same run gives the same output: the demo is deterministic offline.
	var again bytes.Buffer
	require.NoError(t, run(context.Background(), &again, quiet(), filepath.Join(t.TempDir(), "m.db"), false, noEnv))
	assert.Equal(t, stripPath(got), stripPath(again.String()))
}

// varying matches what differs between two runs: wall-clock dates, random
// session-derived ids, and token counts that include them.
var varying = regexp.MustCompile(`\d{4}-\d\d-\d\d( \d\d:\d\d UTC)?|int-[0-9a-f]+|\(\d+ of \d+ tokens\)`)

// stripPath drops the line naming the temporary database file and masks
// what varies between runs.
func stripPath(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "memory: SQLite file") {
			keep = append(keep, varying.ReplaceAllString(l, "X"))
		}
	}
	return strings.Join(keep, "\n")
}

func TestDemoRejectsBrokenModelConfig(t *testing.T) {
	env := map[string]string{"AZURE_OPENAI_ENDPOINT": "https://example.openai.azure.com"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	err := run(context.Background(), io.Discard, quiet(), filepath.Join(t.TempDir(), "m.db"), false, lookup)
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
	require.NoError(t, run(context.Background(), &out, quiet(), filepath.Join(t.TempDir(), "unused.db"), false, lookup))
	got := out.String()
	assert.Contains(t, got, "memory: Azure Cosmos DB "+endpoint+", database "+env["AZURE_COSMOS_DATABASE"])
	assert.Contains(t, got, "memory: turns 1-10 stored as one interaction")
	assert.Contains(t, got, "$500 a month", "retrieval found session one's words on Cosmos")
}
