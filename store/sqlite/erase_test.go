package sqlite_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
	"github.com/agentmemory/agentmemory/store/storetest"
)

// openAliceAndBob opens a store file holding documents of every kind for
// alice-user (marked zqxalicemarker) and bob-user (zqxbobmarker), and
// returns it with its path.
func openAliceAndBob(t *testing.T) (*sqlite.Store, string) {
	t.Helper()
	path := sqlitetest.NewFile(t)
	s := openAt(t, path, sqlite.Config{})
	fill(t, s, "alice-user", "zqxalicemarker")
	fill(t, s, "bob-user", "zqxbobmarker")
	return s, path
}

// fill stores documents of every kind, turns, a user state and records
// for user, each carrying marker in its text and its ids.
func fill(t *testing.T, s *sqlite.Store, user, marker string) {
	t.Helper()
	ctx := t.Context()
	for i := range 20 {
		id := fmt.Sprintf("%s-%d", marker, i)
		text := fmt.Sprintf("%s holds the secret plan %d, %s again", marker, i, marker)
		require.NoError(t, s.PutInteraction(ctx, user, interaction("int-"+id, "ses-"+marker, i, text, 1, float32(i), 0, 0)))
		require.NoError(t, s.PutInsight(ctx, user, &store.Insight{ID: "ins-" + id, InsightType: store.InsightSession,
			InsightText: text, SessionIDs: []string{"ses-" + marker}, InsightVector: []float32{0, 1, float32(i), 0}}))
		require.NoError(t, s.AppendTurn(ctx, user, &store.Turn{ID: "turn-" + id, SessionID: "ses-" + marker,
			Messages: []store.TurnMessage{{ID: "msg-" + id, Role: "user", Content: text}}}))
	}
	require.NoError(t, s.PutSession(ctx, user, &store.Session{ID: "ses-" + marker, Summary: marker + " summary of the plan"}))
	require.NoError(t, s.PutUserState(ctx, user, &store.UserState{LeaseOwner: "owner-" + marker}))
	for i := range 5 {
		id := fmt.Sprintf("rec-%s-%d", marker, i)
		require.NoError(t, s.PutRecord(ctx, user, &store.Record{ID: id, Time: t0, Active: i%2 == 0,
			Body: []byte(fmt.Sprintf(`{"note":"%s holds record %d"}`, marker, i))}))
	}
}

// After DeleteUser no byte of the user's words or ids is left in the
// database file, its WAL or its shared memory — not in FTS5 segments, not
// in free pages, not in old WAL frames — while the other user's searches
// return what they returned before.
func TestDeleteUserLeavesNoBytes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, path := openAliceAndBob(t)
	q := store.SearchRequest{Text: "zqxbobmarker secret plan", Vector: []float32{1, 2, 0, 0}, TopK: 7}
	before, err := s.SearchInteractions(ctx, "bob-user", q)
	require.NoError(t, err)
	require.NotEmpty(t, before)
	require.NotZero(t, sqlitetest.FileHits(t, path, "zqxalicemarker"))
	// Alice's text index and its statistics are in memory too.
	mine, err := s.SearchInteractions(ctx, "alice-user", store.SearchRequest{Text: "zqxalicemarker plan"})
	require.NoError(t, err)
	require.NotEmpty(t, mine)

	require.NoError(t, s.DeleteUser(ctx, "alice-user"))
	gone, err := s.SearchInteractions(ctx, "alice-user", store.SearchRequest{Text: "zqxalicemarker plan", Vector: []float32{1, 2, 0, 0}})
	require.NoError(t, err)
	assert.Empty(t, gone, "nothing of alice is found after DeleteUser")
	for _, marker := range []string{"zqxalicemarker", "alice-user"} {
		assert.Zero(t, sqlitetest.FileHits(t, path, marker), "%s left in the files after DeleteUser", marker)
	}
	after, err := s.SearchInteractions(ctx, "bob-user", q)
	require.NoError(t, err)
	assert.Equal(t, storetest.HitIDs(before), storetest.HitIDs(after), "the other user's search is unchanged")
	ins, err := s.SearchInsights(ctx, "bob-user", store.SearchRequest{Text: "zqxbobmarker"})
	require.NoError(t, err)
	assert.NotEmpty(t, ins)

	require.NoError(t, s.Close())
	for _, marker := range []string{"zqxalicemarker", "alice-user"} {
		assert.Zero(t, sqlitetest.FileHits(t, path, marker), "%s left in the files after Close", marker)
	}
	checkIntegrity(t, path)
}

// The deletion log keeps a user's clear id and the ids of what was deleted
// beside their hashes until EraseDeletionNames; after it, no byte of them
// is left in the files, while the hashes and the other subject's names
// stay.
func TestEraseDeletionNamesLeavesNoBytes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, path := openAliceAndBob(t)
	rec := func(seq int64, subject, user, marker string) *store.DeletionRecord {
		r := &store.DeletionRecord{Seq: seq, At: t0, Reason: "forget_session", Subject: subject, UserID: user,
			Hash: fmt.Sprintf("zqxhash%d", seq), Prev: fmt.Sprintf("zqxhash%d", seq-1)}
		for i := range 3 {
			r.Items = append(r.Items, store.DeletedItem{Kind: store.KindInteraction, Action: store.ActionDeleted, Count: 1,
				IDHash: fmt.Sprintf("zqxidhash-%s-%d", subject, i), ID: fmt.Sprintf("int-%s-%d", marker, i)})
		}
		return r
	}
	require.NoError(t, s.AppendDeletion(ctx, rec(1, "zqxsubjecta", "alice-user", "zqxalicemarker")))
	require.NoError(t, s.AppendDeletion(ctx, rec(2, "zqxsubjectb", "bob-user", "zqxbobmarker")))
	require.NoError(t, s.AppendDeletion(ctx, rec(3, "zqxsubjecta", "alice-user", "zqxalicemarker")))

	require.NoError(t, s.DeleteUser(ctx, "alice-user"))
	require.NotZero(t, sqlitetest.FileHits(t, path, "alice-user"), "the log still names the user after DeleteUser")
	require.NotZero(t, sqlitetest.FileHits(t, path, "int-zqxalicemarker-1"))

	n, err := s.EraseDeletionNames(ctx, "zqxsubjecta")
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	for _, marker := range []string{"zqxalicemarker", "alice-user"} {
		assert.Zero(t, sqlitetest.FileHits(t, path, marker), "%s left in the files after EraseDeletionNames", marker)
	}
	for _, kept := range []string{"zqxsubjecta", "zqxidhash-zqxsubjecta-2", "zqxhash3", "bob-user", "int-zqxbobmarker-0"} {
		assert.NotZero(t, sqlitetest.FileHits(t, path, kept), "%s is kept", kept)
	}
	recs, err := s.ListDeletions(ctx, 0, 0)
	require.NoError(t, err)
	require.Len(t, recs, 3)
	assert.Equal(t, "", recs[0].UserID)
	assert.Equal(t, "zqxidhash-zqxsubjecta-0", recs[0].Items[0].IDHash)
	assert.Equal(t, "bob-user", recs[1].UserID)

	require.NoError(t, s.Close())
	for _, marker := range []string{"zqxalicemarker", "alice-user"} {
		assert.Zero(t, sqlitetest.FileHits(t, path, marker), "%s left in the files after Close", marker)
	}
	checkIntegrity(t, path)
}
