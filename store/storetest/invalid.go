package storetest

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

// call is one Store method invocation with fixed, otherwise valid
// arguments, for the tests that run every method.
type call struct {
	name string
	fn   func(st store.Store, user string) error
}

// everyMethod calls each Store method but As and Close for user, with
// arguments that are valid for a healthy user.
func everyMethod(t *testing.T) []call {
	c := ctx(t)
	return []call{
		{"PutInteraction", func(st store.Store, u string) error {
			return st.PutInteraction(c, u, interaction("i1", "s1", t0, "x"))
		}},
		{"GetInteraction", func(st store.Store, u string) error { _, err := st.GetInteraction(c, u, "i1"); return err }},
		{"ListInteractions", func(st store.Store, u string) error {
			_, err := st.ListInteractions(c, u, store.InteractionFilter{})
			return err
		}},
		{"SearchInteractions", func(st store.Store, u string) error {
			_, err := st.SearchInteractions(c, u, store.SearchRequest{Text: "x", Vector: unit(0)})
			return err
		}},
		{"PutInsight", func(st store.Store, u string) error { return st.PutInsight(c, u, insight("n1", t0, "x")) }},
		{"GetInsight", func(st store.Store, u string) error { _, err := st.GetInsight(c, u, "n1"); return err }},
		{"ListInsights", func(st store.Store, u string) error {
			_, err := st.ListInsights(c, u, store.InsightFilter{IncludeSuperseded: true})
			return err
		}},
		{"SearchInsights", func(st store.Store, u string) error {
			_, err := st.SearchInsights(c, u, store.SearchRequest{Text: "x", Vector: unit(0)})
			return err
		}},
		{"FindInsightByHash", func(st store.Store, u string) error {
			_, err := st.FindInsightByHash(c, u, store.ContentHash("x"))
			return err
		}},
		{"SupersedeInsight", func(st store.Store, u string) error {
			return st.SupersedeInsight(c, u, "n1", store.Supersession{Reason: store.ReasonForgotten})
		}},
		{"PutSession", func(st store.Store, u string) error { return st.PutSession(c, u, session("s1", t0, "x")) }},
		{"GetSession", func(st store.Store, u string) error { _, err := st.GetSession(c, u, "s1"); return err }},
		{"ListSessions", func(st store.Store, u string) error {
			_, err := st.ListSessions(c, u, store.SessionFilter{})
			return err
		}},
		{"SearchSessions", func(st store.Store, u string) error {
			_, err := st.SearchSessions(c, u, store.SearchRequest{Text: "x", Vector: unit(0)})
			return err
		}},
		{"DeleteDocument", func(st store.Store, u string) error {
			return st.DeleteDocument(c, u, store.KindInteraction, "i1")
		}},
		{"DeleteSession", func(st store.Store, u string) error { _, err := st.DeleteSession(c, u, "s1"); return err }},
		{"DeleteUser", func(st store.Store, u string) error { return st.DeleteUser(c, u) }},
	}
}

// badUserIDs are malformed user ids, and the one reserved for the
// deletion log's partition.
var badUserIDs = []string{"", " ", "\t\n", "a/b", "/", `a\b`, "a?b", "a#b", "a\x00b", "a\nb", "\xff", strings.Repeat("u", 256), store.DeletionLogPartition}

func testInvalid(t *testing.T, s *suite) {
	t.Run("UserID", func(t *testing.T) {
		st := s.fresh(t)
		putOneOfEach(t, st, alice)
		for _, m := range everyMethod(t) {
			for _, u := range badUserIDs {
				assert.ErrorIs(t, m.fn(st, u), store.ErrInvalid, "%s with user id %q", m.name, u)
			}
		}
		// The longest valid id works.
		long := strings.Repeat("u", 255)
		for _, m := range everyMethod(t) {
			err := m.fn(st, long)
			assert.False(t, errors.Is(err, store.ErrInvalid), "%s with a 255-byte user id: %v", m.name, err)
		}
		assertUserHasOneOfEach(t, st, alice)
	})
	t.Run("NilDocuments", func(t *testing.T) {
		st := s.fresh(t)
		assert.ErrorIs(t, st.PutInteraction(ctx(t), alice, nil), store.ErrInvalid)
		assert.ErrorIs(t, st.PutInsight(ctx(t), alice, nil), store.ErrInvalid)
		assert.ErrorIs(t, st.PutSession(ctx(t), alice, nil), store.ErrInvalid)
	})
	t.Run("Documents", func(t *testing.T) {
		st := s.fresh(t)
		short := []float32{1, 2, 3}
		long := make([]float32, Dimensions+1)
		long[0] = 1
		nan := vec(1, float32(math.NaN()))
		inf := vec(float32(math.Inf(1)))
		huge := strings.Repeat("x", store.MaxDocumentBytes)

		interactions := map[string]func(*store.Interaction){
			"no id":               func(d *store.Interaction) { d.ID = "" },
			"slash in id":         func(d *store.Interaction) { d.ID = "a/b" },
			"no session":          func(d *store.Interaction) { d.SessionID = "" },
			"turn range":          func(d *store.Interaction) { d.FirstTurn, d.LastTurn = 5, 4 },
			"negative turn":       func(d *store.Interaction) { d.FirstTurn = -1 },
			"short content vec":   func(d *store.Interaction) { d.ContentVector = short },
			"long summary vec":    func(d *store.Interaction) { d.SummaryVector = long },
			"NaN vector":          func(d *store.Interaction) { d.ContentVector = nan },
			"Inf vector":          func(d *store.Interaction) { d.SummaryVector = inf },
			"oversized":           func(d *store.Interaction) { d.Content = huge },
			"other user's":        func(d *store.Interaction) { d.UserID = bob },
			"oversized in fields": func(d *store.Interaction) { d.Metadata.Entities = []string{huge[:len(huge)/2], huge[:len(huge)/2]} },
		}
		for name, mut := range interactions {
			d := interaction("i1", "s1", t0, "x")
			mut(d)
			assert.ErrorIs(t, st.PutInteraction(ctx(t), alice, d), store.ErrInvalid, name)
		}
		insights := map[string]func(*store.Insight){
			"no id":              func(d *store.Insight) { d.ID = "" },
			"no type":            func(d *store.Insight) { d.InsightType = "" },
			"unknown type":       func(d *store.Insight) { d.InsightType = "rumour" },
			"long-term id":       func(d *store.Insight) { d.InsightType = store.InsightLongTerm },
			"confidence high":    func(d *store.Insight) { d.Confidence = ptr(1.5) },
			"confidence low":     func(d *store.Insight) { d.Confidence = ptr(-0.1) },
			"confidence NaN":     func(d *store.Insight) { d.Confidence = ptr(math.NaN()) },
			"unknown reason":     func(d *store.Insight) { d.SupersedeReason = "bored" },
			"short vector":       func(d *store.Insight) { d.InsightVector = short },
			"NaN vector":         func(d *store.Insight) { d.InsightVector = nan },
			"oversized":          func(d *store.Insight) { d.InsightText = huge },
			"other user's":       func(d *store.Insight) { d.UserID = bob },
			"other user profile": func(d *store.Insight) { d.ID, d.InsightType = store.LongTermID(bob), store.InsightLongTerm },
		}
		for name, mut := range insights {
			d := insight("n1", t0, "x")
			mut(d)
			assert.ErrorIs(t, st.PutInsight(ctx(t), alice, d), store.ErrInvalid, name)
		}
		sessions := map[string]func(*store.Session){
			"no id":              func(d *store.Session) { d.ID = "" },
			"hash in id":         func(d *store.Session) { d.ID = "s#1" },
			"unknown status":     func(d *store.Session) { d.Status = "paused" },
			"unknown reflect":    func(d *store.Session) { d.ReflectionStatus = "maybe" },
			"negative reflected": func(d *store.Session) { d.ReflectedThrough = -1 },
			"long vector":        func(d *store.Session) { d.SummaryVector = long },
			"Inf vector":         func(d *store.Session) { d.SummaryVector = inf },
			"oversized":          func(d *store.Session) { d.Summary = huge },
			"oversized in turn": func(d *store.Session) {
				d.State.Turns = []store.Turn{{Seq: 1, Messages: []store.TurnMessage{{Content: huge}}}}
			},
			"other user's": func(d *store.Session) { d.UserID = bob },
		}
		for name, mut := range sessions {
			d := session("s1", t0, "x")
			mut(d)
			assert.ErrorIs(t, st.PutSession(ctx(t), alice, d), store.ErrInvalid, name)
		}
		// Nothing was stored by a rejected write.
		assertUserEmpty(t, st, alice)
		assertUserEmpty(t, st, bob)

		// Just under the size limit is fine.
		d := interaction("big", "s1", t0, strings.Repeat("x", store.MaxDocumentBytes-4096))
		require.NoError(t, st.PutInteraction(ctx(t), alice, d))
		got, err := st.GetInteraction(ctx(t), alice, "big")
		require.NoError(t, err)
		assert.Len(t, got.Content, store.MaxDocumentBytes-4096)
	})
	t.Run("DocumentIDs", func(t *testing.T) {
		st := s.fresh(t)
		for _, id := range []string{"", " ", "a/b", "a?b", "a#b", `a\b`, "a\x01"} {
			_, err := st.GetInteraction(ctx(t), alice, id)
			assert.ErrorIs(t, err, store.ErrInvalid, "GetInteraction %q", id)
			_, err = st.GetInsight(ctx(t), alice, id)
			assert.ErrorIs(t, err, store.ErrInvalid, "GetInsight %q", id)
			_, err = st.GetSession(ctx(t), alice, id)
			assert.ErrorIs(t, err, store.ErrInvalid, "GetSession %q", id)
			assert.ErrorIs(t, st.SupersedeInsight(ctx(t), alice, id, store.Supersession{Reason: store.ReasonForgotten}), store.ErrInvalid, "SupersedeInsight %q", id)
			for _, kind := range store.Kinds {
				assert.ErrorIs(t, st.DeleteDocument(ctx(t), alice, kind, id), store.ErrInvalid, "DeleteDocument %s %q", kind, id)
			}
		}
		for _, kind := range []store.Kind{"", "users", "Interactions"} {
			assert.ErrorIs(t, st.DeleteDocument(ctx(t), alice, kind, "i1"), store.ErrInvalid, "kind %q", kind)
		}
	})
	t.Run("Search", func(t *testing.T) {
		st := s.fresh(t)
		for _, k := range searchKinds {
			putCorpus(t, st, k, alice)
		}
		bad := map[string]store.SearchRequest{
			"empty":              {},
			"short vector":       {Vector: []float32{1, 0, 0}},
			"long vector":        {Text: "zebra", Vector: make([]float32, Dimensions*2)},
			"NaN vector":         {Vector: vec(float32(math.NaN()))},
			"negative TopK":      {Text: "zebra", TopK: -1},
			"huge TopK":          {Text: "zebra", TopK: store.MaxTopK + 1},
			"MinSimilarity high": {Vector: qv, MinSimilarity: 1.5},
			"MinSimilarity low":  {Vector: qv, MinSimilarity: -1.5},
			"MinSimilarity NaN":  {Vector: qv, MinSimilarity: math.NaN()},
			"text too long":      {Text: strings.Repeat("a", store.MaxQueryBytes+1)},
			"bad session id":     {Text: "zebra", SessionID: "a/b"},
			"unknown field":      {Vector: qv, VectorFields: []store.VectorField{"title_vector"}},
		}
		for _, k := range searchKinds {
			for name, q := range bad {
				_, err := k.find(t, st, alice, q)
				assert.ErrorIs(t, err, store.ErrInvalid, "%s: %s", k.name, name)
			}
		}
		// A vector field of another kind.
		_, err := st.SearchInteractions(ctx(t), alice, store.SearchRequest{Vector: qv, VectorFields: []store.VectorField{store.FieldInsightVector}})
		assert.ErrorIs(t, err, store.ErrInvalid)
		_, err = st.SearchInsights(ctx(t), alice, store.SearchRequest{Vector: qv, VectorFields: []store.VectorField{store.FieldContentVector}})
		assert.ErrorIs(t, err, store.ErrInvalid)
		_, err = st.SearchSessions(ctx(t), alice, store.SearchRequest{Vector: qv, VectorFields: []store.VectorField{store.FieldContentVector}})
		assert.ErrorIs(t, err, store.ErrInvalid)
		// The limits themselves are fine.
		for _, k := range searchKinds {
			hits, err := k.find(t, st, alice, store.SearchRequest{Text: strings.Repeat("a", store.MaxQueryBytes), TopK: store.MaxTopK, MinSimilarity: -1, Vector: qv})
			require.NoError(t, err, k.name)
			assert.Len(t, hits, 8, k.name)
		}
	})
}

func testClosed(t *testing.T, s *suite) {
	st := s.open(t)
	require.NotNil(t, st)
	putOneOfEach(t, st, alice)
	require.NoError(t, st.Close())
	for _, m := range everyMethod(t) {
		assert.ErrorIs(t, m.fn(st, alice), store.ErrClosed, m.name)
	}
}

// notAClient is a type no backend documents for As.
type notAClient struct{ _ int }

func testAs(t *testing.T, s *suite) {
	st := s.fresh(t)
	var c *notAClient
	assert.False(t, st.As(&c), "As with a type the backend does not document")
	assert.Nil(t, c)
	var n int
	assert.False(t, st.As(&n))
	assert.False(t, st.As(nil))
}
