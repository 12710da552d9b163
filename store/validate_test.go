package store

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sqrt32(x float32) float32 { return float32(math.Sqrt(float64(x))) }

func TestValidatorRejects(t *testing.T) {
	v := Validator{Dimensions: 3}
	conf := 1.5
	cases := map[string]error{
		"empty user":     v.Interaction("", &Interaction{ID: "i", SessionID: "s"}),
		"slash in user":  v.Interaction("a/b", &Interaction{ID: "i", SessionID: "s"}),
		"other owner":    v.Interaction("u1", &Interaction{ID: "i", UserID: "u2", SessionID: "s"}),
		"no id":          v.Interaction("u1", &Interaction{SessionID: "s"}),
		"bad turns":      v.Interaction("u1", &Interaction{ID: "i", SessionID: "s", FirstTurn: 5, LastTurn: 2}),
		"wrong dims":     v.Interaction("u1", &Interaction{ID: "i", SessionID: "s", ContentVector: []float32{1, 2}}),
		"nan vector":     v.Interaction("u1", &Interaction{ID: "i", SessionID: "s", ContentVector: []float32{1, float32(math.NaN()), 0}}),
		"oversized":      v.Interaction("u1", &Interaction{ID: "i", SessionID: "s", Content: strings.Repeat("x", MaxDocumentBytes)}),
		"insight type":   v.Insight("u1", &Insight{ID: "x"}),
		"confidence":     v.Insight("u1", &Insight{ID: "x", InsightType: InsightSession, Confidence: &conf}),
		"longterm id":    v.Insight("u1", &Insight{ID: "longterm-u2", InsightType: InsightLongTerm}),
		"session status": v.Session("u1", &SessionSummary{ID: "s", Status: "paused"}),
		"nil session":    v.Session("u1", nil),
		"empty search":   func() error { _, err := v.Search(KindInteraction, SearchRequest{}); return err }(),
		"bad field": func() error {
			_, err := v.Search(KindInsight, SearchRequest{Text: "x", VectorFields: []VectorField{FieldContentVector}})
			return err
		}(),
		"top k": func() error { _, err := v.Search(KindInsight, SearchRequest{Text: "x", TopK: -1}); return err }(),
		"supersede self": func() error {
			_, err := v.Supersession("a", Supersession{By: "a", Reason: ReasonDuplicate})
			return err
		}(),
		"supersede no by": func() error { _, err := v.Supersession("a", Supersession{Reason: ReasonContradict}); return err }(),
	}
	for name, err := range cases {
		assert.ErrorIs(t, err, ErrInvalid, name)
	}
}

func TestValidatorFillsDefaults(t *testing.T) {
	v := Validator{}
	in := &Insight{ID: "i1", InsightType: InsightSession, InsightText: "  Likes   Bonds "}
	require.NoError(t, v.Insight("u1", in))
	assert.Equal(t, "u1", in.UserID)
	assert.Equal(t, ContentHash("likes bonds"), in.ContentHash)

	s := &SessionSummary{ID: "s1"}
	require.NoError(t, v.Session("u1", s))
	assert.Equal(t, SessionActive, s.Status)
	assert.Equal(t, ReflectionPending, s.ReflectionStatus)

	q, err := v.Search(KindInteraction, SearchRequest{Text: "bonds"})
	require.NoError(t, err)
	assert.Equal(t, DefaultTopK, q.TopK)
	assert.Equal(t, []VectorField{FieldContentVector, FieldSummaryVector}, q.VectorFields)

	sup, err := v.Supersession("a", Supersession{Reason: ReasonForgotten})
	require.NoError(t, err)
	assert.False(t, sup.At.IsZero())
}

func TestDeterministicIDs(t *testing.T) {
	assert.Equal(t, InteractionID("s", 1, 10), InteractionID("s", 1, 10))
	assert.NotEqual(t, InteractionID("s", 1, 10), InteractionID("s", 11, 20))
	assert.NotEqual(t, InteractionID("s1", 1, 10), InteractionID("s", 11, 10))
	assert.NoError(t, CheckID("id", InteractionID("weird/session?", 1, 2)))
	assert.Equal(t, "longterm-u1", LongTermID("u1"))
	assert.Len(t, ContentHash("x"), 32)
}

func TestLongTermIDFitsEveryUserID(t *testing.T) {
	// Profiles stored under "longterm-<user>" keep their id.
	assert.Equal(t, "longterm-alice", LongTermID("alice"))
	fits := strings.Repeat("u", MaxIDBytes-len("longterm-"))
	assert.Equal(t, "longterm-"+fits, LongTermID(fits))

	seen := map[string]string{}
	for _, u := range []string{
		fits + "u",
		fits + "v",
		strings.Repeat("u", MaxIDBytes),
		strings.Repeat("日", MaxIDBytes/3),
		strings.Repeat("🙂", MaxIDBytes/4) + "xyz",
	} {
		require.NoError(t, CheckUserID(u), "%d bytes", len(u))
		id := LongTermID(u)
		require.NoError(t, CheckID("profile id", id), "profile of a %d-byte user", len(u))
		assert.True(t, strings.HasPrefix(id, "longterm-sha256-"), id)
		assert.Equal(t, id, LongTermID(u), "deterministic")
		require.NoError(t, Validator{}.Insight(u, &Insight{ID: id, InsightType: InsightLongTerm}))
		assert.NotContains(t, seen, id, "users %q and %q share a profile id", seen[id], u)
		seen[id] = u
	}
}

func TestIDOneByteTooLong(t *testing.T) {
	long := strings.Repeat("u", MaxIDBytes+1)
	err := CheckUserID(long)
	require.ErrorIs(t, err, ErrInvalid)
	assert.ErrorContains(t, err, "user id: 256 bytes, at most 255")
	err = CheckID("session id", long)
	require.ErrorIs(t, err, ErrInvalid)
	assert.ErrorContains(t, err, "session id: 256 bytes, at most 255")
	require.NoError(t, CheckUserID(long[1:]))
}
