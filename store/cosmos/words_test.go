package cosmos

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

func TestQueryWords(t *testing.T) {
	assert.Equal(t, []string{"zebra", "and", "quartz"}, queryWords(`"Zebra" AND zebra* (QUARTZ)`), "operators are plain words")
	assert.Equal(t, []string{"zürich", "ålesund"}, queryWords("ZÜRICH, Ålesund 🎉"))
	assert.Empty(t, queryWords(`'; -- "*()`))
	assert.Equal(t, []string{"zebra", "quartz"}, queryWords("zebra\x00quartz"), "NUL separates words")
	var many []string
	for i := range 100 {
		many = append(many, strings.Repeat("w", i+1))
	}
	assert.Len(t, queryWords(strings.Join(many, " ")), maxQueryWords)
}

// TestEncodedDocuments checks the stored JSON: the store's field names,
// the fixed-width ordered time, the derived search fields, no _etag.
func TestEncodedDocuments(t *testing.T) {
	zone := time.FixedZone("x", 5*3600+1800)
	in := &store.Interaction{ID: "i1", UserID: "alice", SessionID: "s1", Timestamp: time.Date(2026, 3, 1, 15, 30, 0, 5, zone),
		Content: "user: Bonds, bonds!", Summary: "Ladder", SummaryVector: []float32{1, 0},
		Metadata: store.Metadata{MentionedTopics: []string{"bonds"}, Entities: []string{"Vanguard Group"}}}
	b, err := encodeInteraction(in)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	assert.Equal(t, "2026-03-01T10:00:00.000000005Z", m["timestamp"])
	assert.Equal(t, []any{"bonds", "group", "ladder", "user", "vanguard"}, m["search_terms"])
	assert.Equal(t, float64(7), m["search_length"])
	assert.Equal(t, []any{"summary_vector"}, m["vector_fields"])
	assert.Equal(t, "s1", m["session_id"])
	assert.NotContains(t, m, "content_vector", "omitempty kept")

	back, err := decode[store.Interaction](b)
	require.NoError(t, err)
	assert.True(t, in.Timestamp.Equal(back.Timestamp))
	assert.Equal(t, in.Metadata, back.Metadata)

	sb, err := encodeSession(&store.Session{ID: "s1", UserID: "alice", ETag: `"stale"`, StartTime: time.Time{}})
	require.NoError(t, err)
	assert.NotContains(t, string(sb), "_etag")
	assert.Contains(t, string(sb), `"start_time":"0001-01-01T00:00:00.000000000Z"`)
}
