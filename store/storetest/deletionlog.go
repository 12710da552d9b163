package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

// logOf returns st's deletion log, skipping the test for a backend that
// keeps none.
func logOf(t *testing.T, st store.Store) store.DeletionLog {
	t.Helper()
	lg, ok := st.(store.DeletionLog)
	if !ok {
		t.Skipf("%T does not implement store.DeletionLog", st)
	}
	return lg
}

// deletion returns record seq of a log: a subject and the clear names
// beside it, a hash chained to seq-1's, and one deleted item per id.
func deletion(seq int64, subject, userID string, ids ...string) *store.DeletionRecord {
	r := &store.DeletionRecord{
		Seq: seq, At: at(int(seq)), Reason: "forget_session", Subject: subject, UserID: userID,
		Hash: fmt.Sprintf("hash-%d", seq), Prev: fmt.Sprintf("hash-%d", seq-1),
	}
	if seq == 1 {
		r.Prev, r.Key = "", "key-params"
	}
	for i, id := range ids {
		kind := store.KindInteraction
		if i == 0 {
			kind = store.KindTurn
		}
		r.Items = append(r.Items, store.DeletedItem{Kind: kind, Action: store.ActionDeleted, Count: i + 1, IDHash: "idh-" + id, ID: id})
	}
	return r
}

// canonDeletion makes records comparable across backends: UTC instants,
// and no items as nil.
func canonDeletion(r *store.DeletionRecord) *store.DeletionRecord {
	c := *r
	c.At = canon(c.At)
	if len(c.Items) == 0 {
		c.Items = nil
	}
	return &c
}

func canonDeletions(rs []*store.DeletionRecord) []*store.DeletionRecord {
	return each(rs, canonDeletion)
}

func deletionSeqs(rs []*store.DeletionRecord) []int64 {
	return each(rs, func(r *store.DeletionRecord) int64 { return r.Seq })
}

func testDeletionLog(t *testing.T, s *suite) {
	t.Run("Append", func(t *testing.T) {
		st := s.fresh(t)
		lg := logOf(t, st)
		_, err := lg.LastDeletion(ctx(t))
		require.ErrorIs(t, err, store.ErrNotFound, "an empty log has no last record")
		none, err := lg.ListDeletions(ctx(t), 0, 0)
		require.NoError(t, err)
		assert.NotNil(t, none)
		assert.Empty(t, none)

		want := []*store.DeletionRecord{
			deletion(1, "subj-a", alice, "s1", "i1"),
			deletion(2, "subj-b", bob),
			deletion(3, "subj-a", alice, "n1"),
		}
		want[1].Reason = "forget_user"
		for _, r := range want {
			require.NoError(t, lg.AppendDeletion(ctx(t), r))
		}
		got, err := lg.ListDeletions(ctx(t), 0, 0)
		require.NoError(t, err)
		assert.Equal(t, canonDeletions(want), canonDeletions(got))
		last, err := lg.LastDeletion(ctx(t))
		require.NoError(t, err)
		assert.Equal(t, canonDeletion(want[2]), canonDeletion(last))

		// Only the next number is accepted; a refused record changes nothing.
		for _, seq := range []int64{1, 3, 5} {
			r := deletion(seq, "subj-x", "mallory")
			assert.ErrorIs(t, lg.AppendDeletion(ctx(t), r), store.ErrConflict, "seq %d after 3", seq)
		}
		again, err := lg.ListDeletions(ctx(t), 0, 0)
		require.NoError(t, err)
		assert.Equal(t, canonDeletions(want), canonDeletions(again))
		require.NoError(t, lg.AppendDeletion(ctx(t), deletion(4, "subj-x", "")))
	})
	t.Run("ListAfterLimit", func(t *testing.T) {
		lg := logOf(t, s.fresh(t))
		for seq := int64(1); seq <= 5; seq++ {
			require.NoError(t, lg.AppendDeletion(ctx(t), deletion(seq, "subj-a", alice)))
		}
		for _, c := range []struct {
			after int64
			limit int
			want  []int64
		}{
			{0, 0, []int64{1, 2, 3, 4, 5}},
			{-1, 0, []int64{1, 2, 3, 4, 5}},
			{0, -1, []int64{1, 2, 3, 4, 5}},
			{2, 2, []int64{3, 4}},
			{4, 10, []int64{5}},
			{0, 1, []int64{1}},
			{5, 0, []int64{}},
			{9, 3, []int64{}},
		} {
			got, err := lg.ListDeletions(ctx(t), c.after, c.limit)
			require.NoError(t, err)
			assert.Equal(t, c.want, deletionSeqs(got), "after %d, limit %d", c.after, c.limit)
		}
	})
	t.Run("ConcurrentAppenders", func(t *testing.T) {
		lg := logOf(t, s.fresh(t))
		const writers, each = 4, 3
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					if err := appendNext(t, lg, fmt.Sprintf("subj-%d", w), fmt.Sprintf("w%d-%d", w, i)); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		got, err := lg.ListDeletions(ctx(t), 0, 0)
		require.NoError(t, err)
		seqs := deletionSeqs(got)
		want := make([]int64, writers*each)
		for i := range want {
			want[i] = int64(i + 1)
		}
		assert.Equal(t, want, seqs, "every append landed, numbered without gaps")
		ids := map[string]bool{}
		for _, r := range got {
			require.Len(t, r.Items, 1)
			ids[r.Items[0].ID] = true
		}
		assert.Len(t, ids, writers*each, "each writer's records are all there, once")
	})
	t.Run("EraseNames", func(t *testing.T) {
		st := s.fresh(t)
		lg := logOf(t, st)
		recs := []*store.DeletionRecord{
			deletion(1, "subj-a", alice, "s1", "i1"),
			deletion(2, "subj-b", bob, "s1"),
			deletion(3, "subj-a", alice, "n1"),
			deletion(4, "subj-a", ""), // already without names
		}
		for _, r := range recs {
			require.NoError(t, lg.AppendDeletion(ctx(t), r))
		}
		n, err := lg.EraseDeletionNames(ctx(t), "subj-a")
		require.NoError(t, err)
		assert.Equal(t, 2, n, "records changed")

		got, err := lg.ListDeletions(ctx(t), 0, 0)
		require.NoError(t, err)
		require.Len(t, got, 4)
		for i, r := range got {
			want := canonDeletion(recs[i])
			if want.Subject == "subj-a" {
				// The clear names go; the chained part stays as it was.
				want.UserID = ""
				want.Items = append([]store.DeletedItem(nil), want.Items...)
				for j := range want.Items {
					want.Items[j].ID = ""
				}
			}
			assert.Equal(t, want, canonDeletion(r), "record %d", i+1)
		}
		assert.Equal(t, "hash-1", got[0].Hash)
		assert.Equal(t, "key-params", got[0].Key)
		assert.Equal(t, "idh-s1", got[0].Items[0].IDHash)

		n, err = lg.EraseDeletionNames(ctx(t), "subj-a")
		require.NoError(t, err)
		assert.Zero(t, n, "nothing left to erase")
		n, err = lg.EraseDeletionNames(ctx(t), "subj-nobody")
		require.NoError(t, err)
		assert.Zero(t, n)
		_, err = lg.EraseDeletionNames(ctx(t), "")
		assert.ErrorIs(t, err, store.ErrInvalid)
		// Appending goes on after an erase.
		require.NoError(t, lg.AppendDeletion(ctx(t), deletion(5, "subj-b", bob)))
	})
	t.Run("SurvivesDeleteUser", func(t *testing.T) {
		st := s.fresh(t)
		lg := logOf(t, st)
		putOneOfEach(t, st, alice)
		rec := deletion(1, "subj-a", alice, "s1")
		require.NoError(t, lg.AppendDeletion(ctx(t), rec))
		require.NoError(t, st.DeleteUser(ctx(t), alice))
		assertUserEmpty(t, st, alice)
		got, err := lg.ListDeletions(ctx(t), 0, 0)
		require.NoError(t, err)
		assert.Equal(t, canonDeletions([]*store.DeletionRecord{rec}), canonDeletions(got), "the log outlives the user")
		// The log's partition is no user's: every user call refuses it.
		_, err = st.ListSessions(ctx(t), store.DeletionLogPartition, store.SessionFilter{})
		assert.ErrorIs(t, err, store.ErrInvalid)
		assert.ErrorIs(t, st.DeleteUser(ctx(t), store.DeletionLogPartition), store.ErrInvalid)
		got, err = lg.ListDeletions(ctx(t), 0, 0)
		require.NoError(t, err)
		assert.Len(t, got, 1)
	})
	t.Run("Invalid", func(t *testing.T) {
		lg := logOf(t, s.fresh(t))
		cases := map[string]func(*store.DeletionRecord){
			"seq 0":        func(r *store.DeletionRecord) { r.Seq = 0 },
			"negative seq": func(r *store.DeletionRecord) { r.Seq = -1 },
			"no time":      func(r *store.DeletionRecord) { r.At = time.Time{} },
			"no hash":      func(r *store.DeletionRecord) { r.Hash = "" },
			"no subject":   func(r *store.DeletionRecord) { r.Subject = "" },
			"no reason":    func(r *store.DeletionRecord) { r.Reason = "" },
			"long reason":  func(r *store.DeletionRecord) { r.Reason = strings.Repeat("r", store.MaxReasonBytes+1) },
			"control":      func(r *store.DeletionRecord) { r.Reason = "forget\nuser" },
			"bad user id":  func(r *store.DeletionRecord) { r.UserID = "a/b" },
			"unknown kind": func(r *store.DeletionRecord) { r.Items[0].Kind = "files" },
			"unknown act":  func(r *store.DeletionRecord) { r.Items[0].Action = "hidden" },
			"zero count":   func(r *store.DeletionRecord) { r.Items[0].Count = 0 },
			"no id hash":   func(r *store.DeletionRecord) { r.Items[0].IDHash = "" },
			"bad item id":  func(r *store.DeletionRecord) { r.Items[0].ID = "a#b" },
			"oversized":    func(r *store.DeletionRecord) { r.Items[0].IDHash = strings.Repeat("h", store.MaxDocumentBytes) },
		}
		for name, mod := range cases {
			r := deletion(1, "subj-a", alice, "s1")
			mod(r)
			assert.ErrorIs(t, lg.AppendDeletion(ctx(t), r), store.ErrInvalid, name)
		}
		assert.ErrorIs(t, lg.AppendDeletion(ctx(t), nil), store.ErrInvalid, "nil")
		_, err := lg.LastDeletion(ctx(t))
		assert.ErrorIs(t, err, store.ErrNotFound, "nothing was stored")
		assert.ErrorIs(t, lg.AppendDeletion(ctx(t), deletion(2, "subj-a", alice)), store.ErrConflict, "the first number is 1")
		// Every kind and KindTurn, both actions, are fine.
		r := deletion(1, "subj-a", alice)
		for _, k := range append([]store.Kind{store.KindTurn}, store.Kinds...) {
			r.Items = append(r.Items, store.DeletedItem{Kind: k, Action: store.ActionRewritten, Count: 1, IDHash: "h-" + string(k)})
		}
		require.NoError(t, lg.AppendDeletion(ctx(t), r))
	})
	t.Run("NoAliasing", func(t *testing.T) {
		lg := logOf(t, s.fresh(t))
		rec := deletion(1, "subj-a", alice, "s1")
		require.NoError(t, lg.AppendDeletion(ctx(t), rec))
		want := canonDeletion(rec)
		want.Items = append([]store.DeletedItem(nil), rec.Items...)
		rec.Items[0].ID, rec.UserID = "changed", "changed"
		got, err := lg.ListDeletions(ctx(t), 0, 0)
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, want, canonDeletion(got[0]))
		got[0].Items[0].ID = "changed"
		last, err := lg.LastDeletion(ctx(t))
		require.NoError(t, err)
		assert.Equal(t, want, canonDeletion(last))
	})
	t.Run("Closed", func(t *testing.T) {
		st := s.open(t)
		lg, ok := st.(store.DeletionLog)
		require.NoError(t, st.Close())
		if !ok {
			t.Skipf("%T does not implement store.DeletionLog", st)
		}
		assert.ErrorIs(t, lg.AppendDeletion(ctx(t), deletion(1, "subj-a", alice)), store.ErrClosed)
		_, err := lg.ListDeletions(ctx(t), 0, 0)
		assert.ErrorIs(t, err, store.ErrClosed)
		_, err = lg.LastDeletion(ctx(t))
		assert.ErrorIs(t, err, store.ErrClosed)
		_, err = lg.EraseDeletionNames(ctx(t), "subj-a")
		assert.ErrorIs(t, err, store.ErrClosed)
	})
}

// appendNext appends a record as the next of the log the way concurrent
// appenders must: read the last number, append the one after, and on
// ErrConflict read again.
func appendNext(t *testing.T, lg store.DeletionLog, subject, id string) error {
	for range 200 {
		var seq int64 = 1
		last, err := lg.LastDeletion(ctx(t))
		switch {
		case err == nil:
			seq = last.Seq + 1
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
		err = lg.AppendDeletion(ctx(t), deletion(seq, subject, "", id))
		if !errors.Is(err, store.ErrConflict) {
			return err
		}
	}
	return fmt.Errorf("append for %s: still conflicting after 200 attempts", subject)
}
