package storetest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

// longestID returns an id of exactly store.MaxIDBytes bytes made of prefix,
// 'x' padding and a final multi-byte rune, so that a backend truncating or
// splitting it by bytes is caught.
func longestID(prefix string) string {
	const tail = "日" // three bytes
	return prefix + strings.Repeat("x", store.MaxIDBytes-len(prefix)-len(tail)) + tail
}

// unusualUserIDs are valid user ids that stress how a backend encodes the
// user (a partition key on Cosmos DB): characters outside the Basic
// Multilingual Plane, non-ASCII inside it, JSON's quote, and format
// characters that are valid but not printable.
var unusualUserIDs = []string{
	"🙂",
	"𝔘ser",
	"日本語",
	`a"b`,
	"a'b",
	"e\u0301",          // combining accent
	"soft\u00adhyp",    // soft hyphen (format character)
	"line\u2028sep",    // line separator: not a control character
	"tag\U000E0041",    // a non-BMP format character
	"max\U0010FFFD",    // the last plane
	longestID("u-"),    // the longest accepted
	longestID("🙂-"),    // the longest accepted, non-BMP
	"zero-width\u200b", // zero-width space
}

func testIDs(t *testing.T, s *suite) {
	t.Run("UserIDs", func(t *testing.T) {
		st := s.fresh(t)
		for _, u := range unusualUserIDs {
			t.Run(label(u), func(t *testing.T) { roundTripIDs(t, st, u, "s1", "n1") })
		}
	})
	t.Run("UserIDsApart", func(t *testing.T) {
		// Users that differ in one non-BMP rune, or only in its encoding
		// length, are different users.
		st := s.fresh(t)
		users := []string{"🙂", "🙃", "\u263a", "𝔘ser", "User"}
		for _, u := range users {
			putOneOfEach(t, st, u)
		}
		for _, u := range users {
			assertUserHasOneOfEach(t, st, u)
		}
		require.NoError(t, st.DeleteUser(ctx(t), "🙂"))
		assertUserEmpty(t, st, "🙂")
		for _, u := range users[1:] {
			assertUserHasOneOfEach(t, st, u)
		}
	})
	t.Run("DocumentIDs", func(t *testing.T) {
		st := s.fresh(t)
		for _, id := range []string{"s-🙂", "𝔘-" + "日本語", `q"uote`, "sp ace", longestID("s-"), longestID("🙂")} {
			t.Run(label(id), func(t *testing.T) { roundTripIDs(t, st, alice, id, id) })
		}
	})
	t.Run("LongestEverything", func(t *testing.T) {
		st := s.fresh(t)
		roundTripIDs(t, st, longestID("user-"), longestID("session-"), longestID("insight-"))
	})
	t.Run("OneByteTooLong", func(t *testing.T) {
		st := s.fresh(t)
		long := longestID("u-") + "x"
		limit := "at most " + strconv.Itoa(store.MaxIDBytes)
		for _, m := range everyMethod(t) {
			err := m.fn(st, long)
			require.ErrorIs(t, err, store.ErrInvalid, "%s with a %d-byte user id", m.name, len(long))
			assert.Contains(t, err.Error(), limit, m.name)
		}
		err := st.PutSession(ctx(t), alice, session(long, t0, "x"))
		require.ErrorIs(t, err, store.ErrInvalid)
		assert.Contains(t, err.Error(), limit)
		err = st.PutInsight(ctx(t), alice, insight(long, t0, "x"))
		require.ErrorIs(t, err, store.ErrInvalid)
		assert.Contains(t, err.Error(), limit)
		err = st.PutInteraction(ctx(t), alice, interaction(long, "s1", t0, "x"))
		require.ErrorIs(t, err, store.ErrInvalid)
		assert.Contains(t, err.Error(), limit)
		err = st.PutInteraction(ctx(t), alice, interaction("i1", long, t0, "x"))
		require.ErrorIs(t, err, store.ErrInvalid)
		assert.Contains(t, err.Error(), limit)
		_, err = st.GetSession(ctx(t), alice, long)
		assert.ErrorIs(t, err, store.ErrInvalid)
		_, err = st.GetInsight(ctx(t), alice, long)
		assert.ErrorIs(t, err, store.ErrInvalid)
		assertUserEmpty(t, st, alice)
	})
}

// label names a subtest after an id: the id itself when short, else its
// first runes and its length.
func label(id string) string {
	if len(id) <= 24 {
		return id
	}
	r := []rune(id)
	return fmt.Sprintf("%s…%dbytes", string(r[:min(len(r), 8)]), len(id))
}

// roundTripIDs runs every Store method for user with session id sessID and
// insight id insID, in the order the keeper and reflection use them: start
// a session, store an interaction, end the session with its ETag, reflect
// an insight and the long-term profile, search, supersede, delete. Another
// user sees none of it, and DeleteUser leaves nothing.
func roundTripIDs(t *testing.T, st store.Store, user, sessID, insID string) {
	t.Helper()
	c := ctx(t)
	text := "zebra quartz"

	// The session starts.
	ss := session(sessID, t0, "")
	ss.ETag = store.CreateOnly
	require.NoError(t, st.PutSession(c, user, ss), "start session")
	got, err := st.GetSession(c, user, sessID)
	require.NoError(t, err)
	assert.Equal(t, sessID, got.ID)
	assert.Equal(t, user, got.UserID)

	// A turn is pruned into an interaction.
	intID := store.InteractionID(sessID, 1, 2)
	in := interaction(intID, sessID, t0, text)
	in.ContentVector = unit(0)
	require.NoError(t, st.PutInteraction(c, user, in))
	gi, err := st.GetInteraction(c, user, intID)
	require.NoError(t, err)
	assert.Equal(t, sessID, gi.SessionID)
	assert.Equal(t, user, gi.UserID)
	ints, err := st.ListInteractions(c, user, store.InteractionFilter{SessionID: sessID})
	require.NoError(t, err)
	assert.Equal(t, []string{intID}, interactionIDs(ints))
	ih, err := st.SearchInteractions(c, user, store.SearchRequest{Text: "zebra", Vector: unit(0), SessionID: sessID})
	require.NoError(t, err)
	assert.Equal(t, []string{intID}, HitIDs(ih))

	// The session ends: a conditional write with the ETag read.
	got.Status = store.SessionCompleted
	got.EndTime = at(1)
	got.Summary = text
	got.SummaryVector = unit(1)
	require.NoError(t, st.PutSession(c, user, got), "end session")
	stale := *got
	stale.ETag = ss.ETag
	assert.ErrorIs(t, st.PutSession(c, user, &stale), store.ErrConflict, "stale ETag")
	sess, err := st.ListSessions(c, user, store.SessionFilter{Status: store.SessionCompleted})
	require.NoError(t, err)
	assert.Equal(t, []string{sessID}, sessionIDs(sess))
	sh, err := st.SearchSessions(c, user, store.SearchRequest{Text: "quartz", Vector: unit(1), SessionID: sessID})
	require.NoError(t, err)
	assert.Equal(t, []string{sessID}, HitIDs(sh))

	// Reflection stores an insight and folds it into the profile.
	n := insight(insID, at(2), text)
	n.SessionIDs = []string{sessID}
	n.SourceInteractionIDs = []string{intID}
	n.InsightVector = unit(2)
	require.NoError(t, st.PutInsight(c, user, n))
	lt := insight(store.LongTermID(user), at(3), "profile "+text)
	lt.InsightType = store.InsightLongTerm
	lt.SourceInsightIDs = []string{insID}
	require.NoError(t, st.PutInsight(c, user, lt), "profile %q", lt.ID)
	gp, err := st.GetInsight(c, user, store.LongTermID(user))
	require.NoError(t, err)
	assert.Equal(t, []string{insID}, gp.SourceInsightIDs)
	gn, err := st.GetInsight(c, user, insID)
	require.NoError(t, err)
	assert.Equal(t, []string{sessID}, gn.SessionIDs)
	found, err := st.FindInsightByHash(c, user, store.ContentHash(text))
	require.NoError(t, err)
	assert.Equal(t, insID, found.ID)
	ins, err := st.ListInsights(c, user, store.InsightFilter{SessionID: sessID})
	require.NoError(t, err)
	assert.Equal(t, []string{insID}, insightIDs(ins))
	ins, err = st.ListInsights(c, user, store.InsightFilter{Type: store.InsightLongTerm})
	require.NoError(t, err)
	assert.Equal(t, []string{store.LongTermID(user)}, insightIDs(ins))
	nh, err := st.SearchInsights(c, user, store.SearchRequest{Text: "zebra", Vector: unit(2), SessionID: sessID})
	require.NoError(t, err)
	assert.Equal(t, []string{insID}, HitIDs(nh))

	// Another user sees none of it.
	other := user + "2"
	if len(other) > store.MaxIDBytes {
		other = "other"
	}
	_, err = st.GetSession(c, other, sessID)
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = st.GetInsight(c, other, insID)
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = st.GetInteraction(c, other, intID)
	assert.ErrorIs(t, err, store.ErrNotFound)
	assertUserEmpty(t, st, other)

	// The insight is forgotten, the interaction deleted, then the user.
	require.NoError(t, st.SupersedeInsight(c, user, insID, store.Supersession{Reason: store.ReasonForgotten}))
	_, err = st.GetInsight(c, user, insID)
	assert.ErrorIs(t, err, store.ErrNotFound)
	audit, err := st.ListInsights(c, user, store.InsightFilter{IncludeSuperseded: true})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{insID, store.LongTermID(user)}, insightIDs(audit))
	require.NoError(t, st.DeleteDocument(c, user, store.KindInteraction, intID))
	_, err = st.GetInteraction(c, user, intID)
	assert.ErrorIs(t, err, store.ErrNotFound)
	require.NoError(t, st.DeleteUser(c, user))
	assertUserEmpty(t, st, user)
	_, err = st.GetSession(c, user, sessID)
	assert.ErrorIs(t, err, store.ErrNotFound)
}
