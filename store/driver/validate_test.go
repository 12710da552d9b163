package driver

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

func TestValidatorRejects(t *testing.T) {
	v := Validator{Dimensions: 3}
	conf := 1.5
	cases := map[string]error{
		"empty user":     v.Interaction("", &store.Interaction{ID: "i", SessionID: "s"}),
		"slash in user":  v.Interaction("a/b", &store.Interaction{ID: "i", SessionID: "s"}),
		"other owner":    v.Interaction("u1", &store.Interaction{ID: "i", UserID: "u2", SessionID: "s"}),
		"no id":          v.Interaction("u1", &store.Interaction{SessionID: "s"}),
		"bad turns":      v.Interaction("u1", &store.Interaction{ID: "i", SessionID: "s", FirstTurn: 5, LastTurn: 2}),
		"wrong dims":     v.Interaction("u1", &store.Interaction{ID: "i", SessionID: "s", ContentVector: []float32{1, 2}}),
		"nan vector":     v.Interaction("u1", &store.Interaction{ID: "i", SessionID: "s", ContentVector: []float32{1, float32(math.NaN()), 0}}),
		"oversized":      v.Interaction("u1", &store.Interaction{ID: "i", SessionID: "s", Content: strings.Repeat("x", store.MaxDocumentBytes)}),
		"insight type":   v.Insight("u1", &store.Insight{ID: "x"}),
		"confidence":     v.Insight("u1", &store.Insight{ID: "x", InsightType: store.InsightSession, Confidence: &conf}),
		"longterm id":    v.Insight("u1", &store.Insight{ID: "longterm-u2", InsightType: store.InsightLongTerm}),
		"session status": v.Session("u1", &store.Session{ID: "s", Status: "paused"}),
		"nil session":    v.Session("u1", nil),
		"empty search":   func() error { _, err := v.Search(store.KindInteraction, store.SearchRequest{}); return err }(),
		"bad field": func() error {
			_, err := v.Search(store.KindInsight, store.SearchRequest{Text: "x", VectorFields: []store.VectorField{store.FieldContentVector}})
			return err
		}(),
		"top k": func() error {
			_, err := v.Search(store.KindInsight, store.SearchRequest{Text: "x", TopK: -1})
			return err
		}(),
		"supersede self": func() error {
			_, err := v.Supersession("a", store.Supersession{By: "a", Reason: store.ReasonDuplicate})
			return err
		}(),
		"supersede no by": func() error {
			_, err := v.Supersession("a", store.Supersession{Reason: store.ReasonContradict})
			return err
		}(),
	}
	for name, err := range cases {
		assert.ErrorIs(t, err, store.ErrInvalid, name)
	}
}

func TestValidatorFillsDefaults(t *testing.T) {
	v := Validator{}
	in := &store.Insight{ID: "i1", InsightType: store.InsightSession, InsightText: "  Likes   Bonds "}
	require.NoError(t, v.Insight("u1", in))
	assert.Equal(t, "u1", in.UserID)
	assert.Equal(t, store.ContentHash("likes bonds"), in.ContentHash)

	s := &store.Session{ID: "s1"}
	require.NoError(t, v.Session("u1", s))
	assert.Equal(t, store.SessionActive, s.Status)
	assert.Equal(t, store.ReflectionPending, s.ReflectionStatus)

	q, err := v.Search(store.KindInteraction, store.SearchRequest{Text: "bonds"})
	require.NoError(t, err)
	assert.Equal(t, store.DefaultTopK, q.TopK)
	assert.Equal(t, []store.VectorField{store.FieldContentVector, store.FieldSummaryVector}, q.VectorFields)

	sup, err := v.Supersession("a", store.Supersession{Reason: store.ReasonForgotten})
	require.NoError(t, err)
	assert.False(t, sup.At.IsZero())
}
