package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

// zone is a non-UTC zone: times put in it must come back as the same
// instant.
var zone = time.FixedZone("UTC+05:30", 5*3600+1800)

// fullInteraction has every field set, with values that do not survive a
// lossy encoding (nanoseconds, float32 fractions, unicode).
func fullInteraction() *store.Interaction {
	return &store.Interaction{
		ID:            store.InteractionID("sess-1", 3, 4),
		UserID:        alice,
		SessionID:     "sess-1",
		Timestamp:     time.Date(2026, 3, 1, 15, 30, 0, 123456789, zone),
		FirstTurn:     3,
		LastTurn:      4,
		TurnIDs:       []string{"msg-5", "msg-6", "msg-7", "msg-8"},
		Content:       "user: I want a bond ladder 📈\nassistant: Let's plan it — über careful, \"quoted\" & <tagged>.",
		ContentVector: vec(0.1, -0.2, 0.3333333, 1e-7, -1, 0.5, 0.25, 0.125),
		Summary:       "The user plans a bond ladder.",
		SummaryVector: vec(0.7, 0.1, -0.1, 0, 0, 0, 0, 0.01),
		Metadata: store.Metadata{
			MentionedTopics: []string{"bonds", "retirement"},
			Entities:        []string{"Vanguard", "Zürich"},
		},
		MetadataPending: true,
		EmbeddingModel:  "text-embedding-3-small",
	}
}

func fullInsight() *store.Insight {
	text := "The user is risk averse and prefers bonds."
	return &store.Insight{
		ID:                   "ins-full",
		UserID:               alice,
		InsightType:          store.InsightSession,
		SessionIDs:           []string{"sess-1", "sess-2"},
		InsightText:          text,
		InsightVector:        vec(0.9, 0.1, -0.3, 0.2, 0, 0, 1e-6, -0.5),
		Confidence:           ptr(0.85),
		Importance:           "high",
		Category:             "risk_profile",
		ReflectionFlag:       store.FlagInsight,
		Processed:            true,
		SourceInteractionIDs: []string{store.InteractionID("sess-1", 1, 2)},
		SourceInsightIDs:     []string{"ins-older"},
		ContentHash:          store.ContentHash(text),
		CreatedAt:            time.Date(2026, 3, 2, 9, 0, 0, 987654321, zone),
		UpdatedAt:            time.Date(2026, 3, 2, 9, 5, 0, 1, zone),
		EmbeddingModel:       "text-embedding-3-small",
	}
}

func fullLongTerm() *store.Insight {
	text := "Profile: 42 years old, saving for retirement, risk averse."
	return &store.Insight{
		ID:               store.LongTermID(alice),
		UserID:           alice,
		InsightType:      store.InsightLongTerm,
		InsightText:      text,
		InsightVector:    unit(3),
		SourceInsightIDs: []string{"ins-1", "ins-2"},
		ContentHash:      store.ContentHash(text),
		CreatedAt:        at(1),
		UpdatedAt:        at(2),
	}
}

func fullSession() *store.Session {
	return &store.Session{
		ID:                "sess-full",
		UserID:            alice,
		StartTime:         time.Date(2026, 3, 1, 10, 0, 0, 5, zone),
		EndTime:           time.Date(2026, 3, 1, 11, 0, 0, 6, zone),
		Summary:           "Discussed a bond ladder.",
		SummaryVector:     vec(0, 0.5, 0.5, -0.25, 0, 0, 0, 0.75),
		KeyTopics:         []string{"bonds", "ladder"},
		ExtractedInsights: []string{"ins-1"},
		Status:            store.SessionCompleted,
		ReflectionStatus:  store.ReflectionProcessed,
		ReflectedThrough:  6,
		State: store.SessionState{
			Turns: []store.Turn{
				{
					Seq: 7,
					Messages: []store.TurnMessage{
						{ID: "m13", Role: "user", Content: "What about TIPS? 🤔"},
						{ID: "m14", Role: "assistant", Name: "advisor", Content: "TIPS track inflation."},
					},
					Time:     time.Date(2026, 3, 1, 10, 50, 0, 7, zone),
					Metadata: map[string]string{"tool": "search", "latency_ms": "12"},
				},
				{
					Seq:      8,
					Messages: []store.TurnMessage{{ID: "m15", Role: "user", Content: "Thanks"}},
					Time:     time.Date(2026, 3, 1, 10, 55, 0, 0, time.UTC),
				},
			},
			CumulativeSummary: "Turns 1-6: the user asked about bonds.",
			TurnCounter:       8,
			PrunedThrough:     6,
		},
		UpdatedAt:      time.Date(2026, 3, 1, 11, 0, 0, 8, zone),
		EmbeddingModel: "text-embedding-3-small",
	}
}

func testInteractions(t *testing.T, s *suite) {
	t.Run("RoundTrip", func(t *testing.T) {
		st := s.fresh(t)
		require.NoError(t, st.PutInteraction(ctx(t), alice, fullInteraction()))
		got, err := st.GetInteraction(ctx(t), alice, fullInteraction().ID)
		require.NoError(t, err)
		assert.Equal(t, canonInteraction(fullInteraction()), canonInteraction(got))
	})
	t.Run("FillsUserID", func(t *testing.T) {
		st := s.fresh(t)
		doc := interaction("i1", "s1", t0, "hello")
		require.NoError(t, st.PutInteraction(ctx(t), alice, doc))
		got, err := st.GetInteraction(ctx(t), alice, "i1")
		require.NoError(t, err)
		assert.Equal(t, alice, got.UserID)
		assert.Equal(t, "hello", got.Content)
	})
	t.Run("RetriedPutIsIdempotent", func(t *testing.T) {
		st := s.fresh(t)
		id := store.InteractionID("s1", 1, 4)
		first := &store.Interaction{ID: id, SessionID: "s1", Timestamp: t0, FirstTurn: 1, LastTurn: 4, Content: "first attempt"}
		require.NoError(t, st.PutInteraction(ctx(t), alice, first))
		retry := &store.Interaction{ID: store.InteractionID("s1", 1, 4), SessionID: "s1", Timestamp: t0, FirstTurn: 1, LastTurn: 4, Content: "second attempt"}
		require.NoError(t, st.PutInteraction(ctx(t), alice, retry))
		list, err := st.ListInteractions(ctx(t), alice, store.InteractionFilter{})
		require.NoError(t, err)
		require.Len(t, list, 1, "a retried prune must overwrite, not duplicate")
		assert.Equal(t, "second attempt", list[0].Content)
		hits, err := st.SearchInteractions(ctx(t), alice, store.SearchRequest{Text: "attempt"})
		require.NoError(t, err)
		require.Len(t, hits, 1)
		assert.Equal(t, "second attempt", hits[0].Doc.Content)
	})
	t.Run("NotFound", func(t *testing.T) {
		st := s.fresh(t)
		_, err := st.GetInteraction(ctx(t), alice, "missing")
		assert.ErrorIs(t, err, store.ErrNotFound)
	})
	t.Run("NoAliasing", func(t *testing.T) {
		st := s.fresh(t)
		doc := fullInteraction()
		require.NoError(t, st.PutInteraction(ctx(t), alice, doc))
		// The caller keeps using its document: the store must not see it.
		doc.TurnIDs[0] = "mutated"
		doc.ContentVector[0] = 42
		doc.SummaryVector[1] = 42
		doc.Metadata.Entities[0] = "mutated"
		doc.Metadata.MentionedTopics[0] = "mutated"
		got, err := st.GetInteraction(ctx(t), alice, doc.ID)
		require.NoError(t, err)
		require.Equal(t, canonInteraction(fullInteraction()), canonInteraction(got))
		// Documents returned are the caller's to modify.
		got.TurnIDs[0] = "mutated"
		got.ContentVector[0] = 42
		got.Metadata.Entities[0] = "mutated"
		list, err := st.ListInteractions(ctx(t), alice, store.InteractionFilter{})
		require.NoError(t, err)
		require.Len(t, list, 1)
		list[0].SummaryVector[0] = 42
		list[0].Metadata.MentionedTopics[0] = "mutated"
		hits, err := st.SearchInteractions(ctx(t), alice, store.SearchRequest{Text: "ladder"})
		require.NoError(t, err)
		require.Len(t, hits, 1)
		hits[0].Doc.ContentVector[1] = 42
		hits[0].Doc.TurnIDs[1] = "mutated"
		again, err := st.GetInteraction(ctx(t), alice, doc.ID)
		require.NoError(t, err)
		assert.Equal(t, canonInteraction(fullInteraction()), canonInteraction(again))
	})
}

func testInsights(t *testing.T, s *suite) {
	t.Run("RoundTrip", func(t *testing.T) {
		st := s.fresh(t)
		for _, mk := range []func() *store.Insight{fullInsight, fullLongTerm} {
			require.NoError(t, st.PutInsight(ctx(t), alice, mk()))
			got, err := st.GetInsight(ctx(t), alice, mk().ID)
			require.NoError(t, err)
			assert.Equal(t, canonInsight(mk()), canonInsight(got))
		}
		lt, err := st.GetInsight(ctx(t), alice, store.LongTermID(alice))
		require.NoError(t, err)
		assert.Nil(t, lt.Confidence, "the profile has no confidence")
	})
	t.Run("FillsUserIDAndHash", func(t *testing.T) {
		st := s.fresh(t)
		doc := insight("i1", t0, "  Likes   BONDS\n")
		require.NoError(t, st.PutInsight(ctx(t), alice, doc))
		got, err := st.GetInsight(ctx(t), alice, "i1")
		require.NoError(t, err)
		assert.Equal(t, alice, got.UserID)
		assert.Equal(t, store.ContentHash("likes bonds"), got.ContentHash)
		assert.Equal(t, "  Likes   BONDS\n", got.InsightText, "the text is stored as given")
	})
	t.Run("Replace", func(t *testing.T) {
		st := s.fresh(t)
		require.NoError(t, st.PutInsight(ctx(t), alice, insight("i1", t0, "old text")))
		doc := insight("i1", t0, "new text")
		doc.Processed = true
		require.NoError(t, st.PutInsight(ctx(t), alice, doc))
		got, err := st.GetInsight(ctx(t), alice, "i1")
		require.NoError(t, err)
		assert.Equal(t, "new text", got.InsightText)
		assert.True(t, got.Processed)
		assert.Equal(t, store.ContentHash("new text"), got.ContentHash, "the hash follows the new text")
		list, err := st.ListInsights(ctx(t), alice, store.InsightFilter{})
		require.NoError(t, err)
		assert.Len(t, list, 1)
	})
	t.Run("NotFound", func(t *testing.T) {
		st := s.fresh(t)
		_, err := st.GetInsight(ctx(t), alice, "missing")
		assert.ErrorIs(t, err, store.ErrNotFound)
		_, err = st.FindInsightByHash(ctx(t), alice, store.ContentHash("nothing"))
		assert.ErrorIs(t, err, store.ErrNotFound)
	})
	t.Run("FindByHash", func(t *testing.T) {
		st := s.fresh(t)
		require.NoError(t, st.PutInsight(ctx(t), alice, insight("old", at(0), "Prefers  index funds")))
		require.NoError(t, st.PutInsight(ctx(t), alice, insight("new", at(2), "prefers index FUNDS ")))
		require.NoError(t, st.PutInsight(ctx(t), alice, insight("other", at(3), "prefers index funds a lot")))
		got, err := st.FindInsightByHash(ctx(t), alice, store.ContentHash("PREFERS INDEX FUNDS"))
		require.NoError(t, err)
		assert.Equal(t, "new", got.ID, "the most recent exact duplicate")
		assert.Equal(t, "prefers index FUNDS ", got.InsightText)
		_, err = st.FindInsightByHash(ctx(t), alice, store.ContentHash("prefers index"))
		assert.ErrorIs(t, err, store.ErrNotFound)
	})
	t.Run("NoAliasing", func(t *testing.T) {
		st := s.fresh(t)
		doc := fullInsight()
		require.NoError(t, st.PutInsight(ctx(t), alice, doc))
		doc.SessionIDs[0] = "mutated"
		doc.InsightVector[0] = 42
		*doc.Confidence = 0.1
		doc.SourceInteractionIDs[0] = "mutated"
		doc.SourceInsightIDs[0] = "mutated"
		got, err := st.GetInsight(ctx(t), alice, doc.ID)
		require.NoError(t, err)
		require.Equal(t, canonInsight(fullInsight()), canonInsight(got))
		got.InsightVector[1] = 42
		*got.Confidence = 0.2
		got.SessionIDs[1] = "mutated"
		list, err := st.ListInsights(ctx(t), alice, store.InsightFilter{})
		require.NoError(t, err)
		require.Len(t, list, 1)
		*list[0].Confidence = 0.3
		list[0].InsightVector[2] = 42
		hits, err := st.SearchInsights(ctx(t), alice, store.SearchRequest{Text: "bonds"})
		require.NoError(t, err)
		require.Len(t, hits, 1)
		hits[0].Doc.InsightVector[3] = 42
		*hits[0].Doc.Confidence = 0.4
		again, err := st.GetInsight(ctx(t), alice, doc.ID)
		require.NoError(t, err)
		assert.Equal(t, canonInsight(fullInsight()), canonInsight(again))
	})
}

func testSessions(t *testing.T, s *suite) {
	t.Run("RoundTrip", func(t *testing.T) {
		st := s.fresh(t)
		doc := fullSession()
		require.NoError(t, st.PutSession(ctx(t), alice, doc))
		require.NotEmpty(t, doc.ETag, "PutSession sets doc.ETag")
		got, err := st.GetSession(ctx(t), alice, doc.ID)
		require.NoError(t, err)
		assert.Equal(t, doc.ETag, got.ETag)
		assert.Equal(t, canonSession(fullSession()), canonSession(got))
	})
	t.Run("FillsDefaults", func(t *testing.T) {
		st := s.fresh(t)
		require.NoError(t, st.PutSession(ctx(t), alice, session("s1", t0, "")))
		got, err := st.GetSession(ctx(t), alice, "s1")
		require.NoError(t, err)
		assert.Equal(t, alice, got.UserID)
		assert.Equal(t, store.SessionActive, got.Status)
		assert.Equal(t, store.ReflectionPending, got.ReflectionStatus)
	})
	t.Run("NotFound", func(t *testing.T) {
		st := s.fresh(t)
		_, err := st.GetSession(ctx(t), alice, "missing")
		assert.ErrorIs(t, err, store.ErrNotFound)
	})
	t.Run("NoAliasing", func(t *testing.T) {
		st := s.fresh(t)
		doc := fullSession()
		require.NoError(t, st.PutSession(ctx(t), alice, doc))
		doc.State.Turns[0].Messages[0].Content = "mutated"
		doc.State.Turns[0].Metadata["tool"] = "mutated"
		doc.State.Turns[1].Seq = 99
		doc.KeyTopics[0] = "mutated"
		doc.SummaryVector[1] = 42
		doc.ExtractedInsights[0] = "mutated"
		got, err := st.GetSession(ctx(t), alice, "sess-full")
		require.NoError(t, err)
		require.Equal(t, canonSession(fullSession()), canonSession(got))
		got.State.Turns[0].Messages[1].Content = "mutated"
		got.State.Turns[0].Metadata["latency_ms"] = "mutated"
		got.SummaryVector[0] = 42
		list, err := st.ListSessions(ctx(t), alice, store.SessionFilter{})
		require.NoError(t, err)
		require.Len(t, list, 1)
		list[0].State.Turns[1].Messages[0].Content = "mutated"
		list[0].KeyTopics[1] = "mutated"
		hits, err := st.SearchSessions(ctx(t), alice, store.SearchRequest{Text: "ladder"})
		require.NoError(t, err)
		require.Len(t, hits, 1)
		hits[0].Doc.State.Turns[0].Messages[0].ID = "mutated"
		hits[0].Doc.SummaryVector[2] = 42
		again, err := st.GetSession(ctx(t), alice, "sess-full")
		require.NoError(t, err)
		assert.Equal(t, canonSession(fullSession()), canonSession(again))
	})
}

func testDelete(t *testing.T, s *suite) {
	t.Run("EachKind", func(t *testing.T) {
		st := s.fresh(t)
		require.NoError(t, st.PutInteraction(ctx(t), alice, interaction("i1", "s1", t0, "zebra")))
		require.NoError(t, st.PutInteraction(ctx(t), alice, interaction("i2", "s1", at(1), "zebra")))
		require.NoError(t, st.PutInsight(ctx(t), alice, insight("n1", t0, "zebra")))
		require.NoError(t, st.PutInsight(ctx(t), alice, insight("n2", at(1), "zebra")))
		require.NoError(t, st.PutSession(ctx(t), alice, session("s1", t0, "zebra")))
		require.NoError(t, st.PutSession(ctx(t), alice, session("s2", at(1), "zebra")))

		require.NoError(t, st.DeleteDocument(ctx(t), alice, store.KindInteraction, "i1"))
		require.NoError(t, st.DeleteDocument(ctx(t), alice, store.KindInsight, "n1"))
		require.NoError(t, st.DeleteDocument(ctx(t), alice, store.KindSessionSummary, "s1"))

		_, err := st.GetInteraction(ctx(t), alice, "i1")
		assert.ErrorIs(t, err, store.ErrNotFound)
		_, err = st.GetInsight(ctx(t), alice, "n1")
		assert.ErrorIs(t, err, store.ErrNotFound)
		_, err = st.GetSession(ctx(t), alice, "s1")
		assert.ErrorIs(t, err, store.ErrNotFound)

		ints, err := st.ListInteractions(ctx(t), alice, store.InteractionFilter{})
		require.NoError(t, err)
		assert.Equal(t, []string{"i2"}, interactionIDs(ints))
		ins, err := st.ListInsights(ctx(t), alice, store.InsightFilter{IncludeSuperseded: true})
		require.NoError(t, err)
		assert.Equal(t, []string{"n2"}, insightIDs(ins))
		sess, err := st.ListSessions(ctx(t), alice, store.SessionFilter{})
		require.NoError(t, err)
		assert.Equal(t, []string{"s2"}, sessionIDs(sess))

		ih, err := st.SearchInteractions(ctx(t), alice, store.SearchRequest{Text: "zebra"})
		require.NoError(t, err)
		assert.Equal(t, []string{"i2"}, HitIDs(ih))
		nh, err := st.SearchInsights(ctx(t), alice, store.SearchRequest{Text: "zebra"})
		require.NoError(t, err)
		assert.Equal(t, []string{"n2"}, HitIDs(nh))
		sh, err := st.SearchSessions(ctx(t), alice, store.SearchRequest{Text: "zebra"})
		require.NoError(t, err)
		assert.Equal(t, []string{"s2"}, HitIDs(sh))

		// Deleting again, or deleting what never was, is ErrNotFound.
		for _, kind := range store.Kinds {
			assert.ErrorIs(t, st.DeleteDocument(ctx(t), alice, kind, "i1"), store.ErrNotFound, kind)
			assert.ErrorIs(t, st.DeleteDocument(ctx(t), alice, kind, "never"), store.ErrNotFound, kind)
		}
		// The kind matters: n2 is an insight, not an interaction.
		assert.ErrorIs(t, st.DeleteDocument(ctx(t), alice, store.KindInteraction, "n2"), store.ErrNotFound)
		_, err = st.GetInsight(ctx(t), alice, "n2")
		assert.NoError(t, err)
	})
	t.Run("SupersededInsight", func(t *testing.T) {
		st := s.fresh(t)
		require.NoError(t, st.PutInsight(ctx(t), alice, insight("n1", t0, "old")))
		require.NoError(t, st.PutInsight(ctx(t), alice, insight("n2", at(1), "new")))
		require.NoError(t, st.SupersedeInsight(ctx(t), alice, "n1", store.Supersession{By: "n2", Reason: store.ReasonContradict}))
		// A soft-deleted insight is still stored, so it can be removed for good.
		require.NoError(t, st.DeleteDocument(ctx(t), alice, store.KindInsight, "n1"))
		list, err := st.ListInsights(ctx(t), alice, store.InsightFilter{IncludeSuperseded: true})
		require.NoError(t, err)
		assert.Equal(t, []string{"n2"}, insightIDs(list))
	})
	t.Run("User", func(t *testing.T) {
		st := s.fresh(t)
		putOneOfEach(t, st, alice)
		putOneOfEach(t, st, bob)
		require.NoError(t, st.DeleteUser(ctx(t), alice))

		_, err := st.GetInteraction(ctx(t), alice, "i1")
		assert.ErrorIs(t, err, store.ErrNotFound)
		_, err = st.GetInsight(ctx(t), alice, "n1")
		assert.ErrorIs(t, err, store.ErrNotFound)
		_, err = st.GetInsight(ctx(t), alice, store.LongTermID(alice))
		assert.ErrorIs(t, err, store.ErrNotFound)
		_, err = st.GetSession(ctx(t), alice, "s1")
		assert.ErrorIs(t, err, store.ErrNotFound)
		assertUserEmpty(t, st, alice)
		// The superseded insight went too: a supersession of n2 is now unknown.
		assert.ErrorIs(t, st.SupersedeInsight(ctx(t), alice, "n2", store.Supersession{By: "n1", Reason: store.ReasonDuplicate}), store.ErrNotFound)

		// Bob keeps everything.
		assertUserHasOneOfEach(t, st, bob)
		audit, err := st.ListInsights(ctx(t), bob, store.InsightFilter{IncludeSuperseded: true})
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{"n1", "n2", store.LongTermID(bob)}, insightIDs(audit))

		// Deleting a user with nothing stored succeeds, again and again.
		require.NoError(t, st.DeleteUser(ctx(t), alice))
		require.NoError(t, st.DeleteUser(ctx(t), "nobody"))
		// A forgotten user can start over.
		require.NoError(t, st.PutInteraction(ctx(t), alice, interaction("i1", "s1", t0, "fresh start")))
		got, err := st.GetInteraction(ctx(t), alice, "i1")
		require.NoError(t, err)
		assert.Equal(t, "fresh start", got.Content)
	})
}

// putOneOfEach gives user interaction i1, insights n1, n2 (superseded by
// n1) and the long-term profile, and session s1, each with the text
// "zebra <user>" ("zebra profile <user>" for the profile) and the vector
// unit(0).
func putOneOfEach(t *testing.T, st store.Store, user string) {
	t.Helper()
	in := interaction("i1", "s1", t0, "zebra "+user)
	in.ContentVector = unit(0)
	require.NoError(t, st.PutInteraction(ctx(t), user, in))
	n1 := insight("n1", t0, "zebra "+user)
	n1.SessionIDs = []string{"s1"}
	n1.InsightVector = unit(0)
	require.NoError(t, st.PutInsight(ctx(t), user, n1))
	lt := insight(store.LongTermID(user), t0, "zebra profile "+user)
	lt.InsightType = store.InsightLongTerm
	lt.InsightVector = unit(0)
	require.NoError(t, st.PutInsight(ctx(t), user, lt))
	require.NoError(t, st.PutInsight(ctx(t), user, insight("n2", at(1), "zebra "+user)))
	require.NoError(t, st.SupersedeInsight(ctx(t), user, "n2", store.Supersession{By: "n1", Reason: store.ReasonDuplicate}))
	ss := session("s1", t0, "zebra "+user)
	ss.SummaryVector = unit(0)
	require.NoError(t, st.PutSession(ctx(t), user, ss))
}

// assertUserEmpty checks that no read of user finds anything.
func assertUserEmpty(t *testing.T, st store.Store, user string) {
	t.Helper()
	ints, err := st.ListInteractions(ctx(t), user, store.InteractionFilter{})
	require.NoError(t, err)
	assert.Empty(t, ints, "interactions of %s", user)
	ins, err := st.ListInsights(ctx(t), user, store.InsightFilter{IncludeSuperseded: true})
	require.NoError(t, err)
	assert.Empty(t, ins, "insights of %s", user)
	sess, err := st.ListSessions(ctx(t), user, store.SessionFilter{})
	require.NoError(t, err)
	assert.Empty(t, sess, "sessions of %s", user)
	q := store.SearchRequest{Text: "zebra profile " + user, Vector: unit(0), MinSimilarity: -1, TopK: store.MaxTopK}
	ih, err := st.SearchInteractions(ctx(t), user, q)
	require.NoError(t, err)
	assert.Empty(t, ih)
	nh, err := st.SearchInsights(ctx(t), user, q)
	require.NoError(t, err)
	assert.Empty(t, nh)
	sh, err := st.SearchSessions(ctx(t), user, q)
	require.NoError(t, err)
	assert.Empty(t, sh)
}

// assertUserHasOneOfEach checks the documents the isolation and delete
// tests give each user: interaction i1, insights n1 and the profile, session
// s1, each with text "zebra <user>".
func assertUserHasOneOfEach(t *testing.T, st store.Store, user string) {
	t.Helper()
	in, err := st.GetInteraction(ctx(t), user, "i1")
	require.NoError(t, err)
	assert.Equal(t, "zebra "+user, in.Content)
	assert.Equal(t, user, in.UserID)
	ins, err := st.GetInsight(ctx(t), user, "n1")
	require.NoError(t, err)
	assert.Equal(t, "zebra "+user, ins.InsightText)
	assert.Equal(t, user, ins.UserID)
	lt, err := st.GetInsight(ctx(t), user, store.LongTermID(user))
	require.NoError(t, err)
	assert.Equal(t, "zebra profile "+user, lt.InsightText)
	ss, err := st.GetSession(ctx(t), user, "s1")
	require.NoError(t, err)
	assert.Equal(t, "zebra "+user, ss.Summary)
	assert.Equal(t, user, ss.UserID)

	ints, err := st.ListInteractions(ctx(t), user, store.InteractionFilter{})
	require.NoError(t, err)
	assert.Equal(t, []string{"i1"}, interactionIDs(ints))
	sess, err := st.ListSessions(ctx(t), user, store.SessionFilter{})
	require.NoError(t, err)
	assert.Equal(t, []string{"s1"}, sessionIDs(sess))
	ih, err := st.SearchInteractions(ctx(t), user, store.SearchRequest{Text: "zebra"})
	require.NoError(t, err)
	assert.Equal(t, []string{"i1"}, HitIDs(ih))
	sh, err := st.SearchSessions(ctx(t), user, store.SearchRequest{Text: "zebra"})
	require.NoError(t, err)
	assert.Equal(t, []string{"s1"}, HitIDs(sh))
	nh, err := st.SearchInsights(ctx(t), user, store.SearchRequest{Text: "zebra"})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"n1", store.LongTermID(user)}, HitIDs(nh))
}
