package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/cosmostest"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

func noEnv(string) (string, bool) { return "", false }

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// runJSON runs the command on testdata with o and returns its output and
// its JSON object.
func runJSON(t *testing.T, o options) (string, map[string]any) {
	t.Helper()
	return runJSONEnv(t, o, noEnv)
}

// runJSONEnv is runJSON in the environment lookup reads.
func runJSONEnv(t *testing.T, o options, lookup func(string) (string, bool)) (string, map[string]any) {
	t.Helper()
	o.data = "testdata"
	o.jsonPath = filepath.Join(t.TempDir(), "out.json")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, quiet(), o, lookup))
	b, err := os.ReadFile(o.jsonPath)
	require.NoError(t, err)
	var obj map[string]any
	require.NoError(t, json.Unmarshal(b, &obj))
	return out.String(), obj
}

// at returns recall (all or any) at k from a JSON figures object.
func at(t *testing.T, f any, k, which string) float64 {
	t.Helper()
	m, ok := f.(map[string]any)
	require.True(t, ok, "figures object")
	v, ok := m["at"].(map[string]any)[k].(map[string]any)["recall_"+which].(float64)
	require.True(t, ok, "recall_%s at %s in %v", which, k, m)
	return v
}

func TestCommandOnTinyConversation(t *testing.T) {
	db := t.TempDir()
	out, obj := runJSON(t, options{k: 10, turns: 2, db: db})

	// The fixture: 8 questions; the adversarial one (category 5), the one
	// without evidence and the one whose only evidence id (D9:9) names no
	// turn are left out, 5 scored. Each session has 4 messages, so 2
	// interactions of 2 turns: 4 documents in all, every one holding both
	// speakers' names, which every question names, so at k=10 every
	// interaction comes back and every question counts.
	assert.EqualValues(t, 5, obj["questions"])
	assert.EqualValues(t, 2, obj["skipped_no_evidence"])
	assert.EqualValues(t, 1, obj["unknown_evidence_ids"])
	assert.InDelta(t, 1, obj["recall_all"], 1e-9)
	assert.InDelta(t, 1, obj["recall_any"], 1e-9)
	assert.InDelta(t, 1, at(t, obj, "10", "all"), 1e-9)
	cats, ok := obj["by_category"].(map[string]any)
	require.True(t, ok)
	require.Len(t, cats, 4)
	for c := range cats {
		assert.InDelta(t, 1, cats[c].(map[string]any)["recall_all"], 1e-9, "category %s", c)
	}
	assert.EqualValues(t, 2, cats["4"].(map[string]any)["questions"])
	for _, key := range []string{"search_p50_ms", "search_p95_ms", "context_tokens_p50"} {
		v, ok := obj[key].(float64)
		require.True(t, ok, "%s missing", key)
		assert.Positive(t, v, key)
	}
	assert.Contains(t, out, "| all | 5 |")
	assert.Contains(t, out, "| 1 multi-hop | 1 |")
	assert.Contains(t, out, "| 4 single-hop | 2 | 1.000 |")
	assert.Contains(t, out, "1 evidence ids naming no turn of their conversation left out")

	// What the memory holds: dia_ids as turn ids, speaker names, session
	// dates, image captions as text, and nothing of the annotations.
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(db, "locomo.db"), sqlite.Config{})
	require.NoError(t, err)
	defer st.Close()
	docs, err := st.ListInteractions(ctx, "locomo-tiny", store.InteractionFilter{})
	require.NoError(t, err)
	require.Len(t, docs, 4)
	var ids []string
	for _, d := range docs {
		ids = append(ids, d.TurnIDs...)
		assert.NotContains(t, strings.ToLower(d.Content+d.Summary), "zebrafact", "annotations must not reach the memory")
	}
	assert.Equal(t, []string{"D1:1", "D1:2", "D1:3", "D1:4", "D2:1", "D2:2", "D2:3", "D2:4"}, ids)
	assert.Equal(t, "Maya: Guess what, I adopted a greyhound puppy named Biscuit last weekend!\nTom: Congrats! I finally started cello lessons in January.", docs[0].Content)
	assert.Contains(t, docs[1].Content, "Tom: Nice. Look, this is me at the Boston marathon yesterday. [image: a man running in a crowd wearing a number bib]")
	march := time.Date(2023, 3, 3, 13, 5, 0, 0, time.UTC)
	april := time.Date(2023, 4, 10, 9, 30, 0, 0, time.UTC)
	assert.True(t, docs[0].Timestamp.Equal(march), "interaction dated by its session: %v", docs[0].Timestamp)
	assert.True(t, docs[3].Timestamp.Equal(april), "%v", docs[3].Timestamp)
	sess, err := st.ListSessions(ctx, "locomo-tiny", store.SessionFilter{})
	require.NoError(t, err)
	require.Len(t, sess, 2)
	assert.Equal(t, "locomo-tiny-s2", sess[0].ID)
	assert.True(t, sess[0].StartTime.Equal(april), "%v", sess[0].StartTime)
	assert.True(t, sess[1].StartTime.Equal(march), "%v", sess[1].StartTime)
	for _, s := range sess {
		assert.Equal(t, store.SessionCompleted, s.Status)
		assert.NotContains(t, strings.ToLower(s.Summary), "zebrafact")
	}
	st.Close()

	// A second run on the same file reuses the memory and scores the same.
	_, again := runJSON(t, options{k: 10, turns: 2, db: db})
	for _, key := range []string{"questions", "recall_all", "recall_any", "by_category", "context_tokens_p50"} {
		assert.Equal(t, obj[key], again[key], key)
	}
}

func TestMultiHopNeedsTwoDocuments(t *testing.T) {
	// The multi-hop question's evidence lies in two interactions (one per
	// session): one document can never hold it all, whatever the ranking.
	_, obj := runJSON(t, options{k: 1, turns: 2})
	cats := obj["by_category"].(map[string]any)
	assert.Zero(t, cats["1"].(map[string]any)["recall_all"])
	assert.InDelta(t, 1, at(t, obj, "10", "all"), 1e-9, "k=5 and k=10 are always reported")
	assert.EqualValues(t, 1, obj["k"])
}

func TestRejects(t *testing.T) {
	ctx := context.Background()
	for name, o := range map[string]options{
		"no files": {data: t.TempDir(), k: 5, turns: 10},
		"k":        {data: "testdata", k: 0, turns: 10},
		"turns":    {data: "testdata", k: 5, turns: 0},
		"floor 1":  {data: "testdata", k: 5, turns: 10, cosineFloor: ptr(1.0)},
	} {
		assert.Error(t, run(ctx, io.Discard, quiet(), o, noEnv), name)
	}
	env := map[string]string{"AZURE_OPENAI_ENDPOINT": "https://example.openai.azure.com"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	err := run(ctx, io.Discard, quiet(), options{data: "testdata", k: 5, turns: 10}, lookup)
	require.Error(t, err, "a half-configured model must be reported, not replaced by the offline client")
	assert.Contains(t, err.Error(), "AZURE_OPENAI")
	require.NoError(t, run(ctx, io.Discard, quiet(), options{data: "testdata", k: 5, turns: 10, offline: true}, lookup), "-offline ignores the model configuration")
}

func TestSplitEvidence(t *testing.T) {
	assert.Equal(t, []string{"D8:6", "D9:17", "D1:2"}, splitEvidence([]string{"D8:6; D9:17", " D1:2 "}))
	assert.Empty(t, splitEvidence(nil))
	turns := map[string]bool{"D1:2": true, "D11:26": true}
	known, unknown := checkEvidence([]string{"D1:2", "D:11:26", "D", "D10:19"}, turns)
	assert.Equal(t, []string{"D1:2", "D11:26"}, known, "a stray colon is repaired")
	assert.Equal(t, []string{"D", "D10:19"}, unknown, "ids naming no turn are set apart")
}

func TestCommandOnCosmos(t *testing.T) {
	endpoint := cosmostest.Endpoint(t) // skips without Node.js or the npm packages (fails in CI)
	env := map[string]string{
		"AZURE_COSMOS_ENDPOINT": endpoint,
		"AZURE_COSMOS_KEY":      cosmostest.Key,
		"AZURE_COSMOS_DATABASE": cosmostest.DatabaseName(t),
	}
	figures := func(lookup func(string) (string, bool)) (string, map[string]any) {
		return runJSONEnv(t, options{k: 10, turns: 2}, lookup)
	}
	out, onCosmos := figures(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	assert.Contains(t, out, "memory on Azure Cosmos DB "+endpoint)
	_, onSQLite := figures(noEnv)
	// The same ingest and questions give the same recall on either store.
	for _, k := range []string{"questions", "recall_all", "recall_any", "by_category"} {
		assert.Equal(t, onSQLite[k], onCosmos[k], k)
	}
}

// TestWithoutServer: without the Cosmos test server's npm packages,
// TestCommandOnCosmos skips, saying why once; in CI it fails.
func TestWithoutServer(t *testing.T) {
	cosmostest.CheckWithoutServer(t, "^TestCommandOnCosmos$")
}

func ptr[T any](v T) *T { return &v }

// -cosine-floor wraps the embedder: its vectors are stored and searched
// (the wrapper is not lexical), and mapping the cosines into 0.15–0.5 or
// 0.7–0.95 changes no figure.
func TestCosineFloorChangesNoFigure(t *testing.T) {
	var figures []map[string]any
	for _, f := range []float64{0, 0.15, 0.7} {
		out, obj := runJSON(t, options{k: 2, turns: 2, cosineFloor: ptr(f)})
		assert.Contains(t, out, fmt.Sprintf("cosines mapped to %.2f + %.2f·c", f, 1-f))
		assert.Contains(t, obj["model"], "cosines mapped")
		for _, k := range []string{"model", "search_p50_ms", "search_p95_ms"} {
			delete(obj, k)
		}
		figures = append(figures, obj)
	}
	assert.Equal(t, figures[0], figures[1])
	assert.Equal(t, figures[0], figures[2])
}
