package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

// records returns st as store.Records, or skips the test when the
// backend does not implement it.
func records(t *testing.T, st store.Store) store.Records {
	t.Helper()
	if w, ok := st.(interface{ Records() store.Records }); ok { // a wrapper handing on a store's records
		return w.Records()
	}
	rs, ok := st.(store.Records)
	if !ok {
		t.Skipf("%T does not implement store.Records", st)
	}
	return rs
}

// record returns a record at hours after t0 with a small JSON body.
func record(id string, hours int, active bool) *store.Record {
	return &store.Record{ID: id, Time: at(hours), Active: active, Body: []byte(`{"id":"` + id + `"}`)}
}

func recordIDs(rs []*store.Record) []string {
	return each(rs, func(r *store.Record) string { return r.ID })
}

// listRecords lists user's records matching f, failing the test on an
// error.
func listRecords(t *testing.T, rs store.Records, user string, f store.RecordFilter) []string {
	t.Helper()
	got, err := rs.ListRecords(ctx(t), user, f)
	require.NoError(t, err, "%+v", f)
	return recordIDs(got)
}

func testRecords(t *testing.T, s *suite) {
	t.Run("RoundTrip", func(t *testing.T) {
		st := s.fresh(t)
		rs := records(t, st)
		_, err := rs.GetRecord(ctx(t), alice, "q1")
		require.ErrorIs(t, err, store.ErrNotFound)

		body := `{"status":"queued","due":"2026-03-01T10:05:00Z","n":[1,2.5,null,true],"s":"é\u2028🙂\"\\"}`
		when := time.Date(2026, 3, 1, 10, 0, 0, 123456789, time.FixedZone("CET", 3600))
		r := &store.Record{ID: "q1", Time: when, Active: true, Body: []byte(body)}
		require.NoError(t, rs.PutRecord(ctx(t), alice, r))
		require.NotEmpty(t, r.ETag)
		got, err := rs.GetRecord(ctx(t), alice, "q1")
		require.NoError(t, err)
		assert.Equal(t, "q1", got.ID)
		assert.True(t, got.Time.Equal(when), "time %v, put %v", got.Time, when)
		assert.True(t, got.Active)
		assert.Equal(t, body, string(got.Body), "a compact body comes back byte for byte")
		assert.Equal(t, r.ETag, got.ETag)

		// The store keeps copies: neither the written nor the read record
		// shares memory with it.
		r.Body[2] = 'X'
		got.Body[2] = 'Y'
		again, err := rs.GetRecord(ctx(t), alice, "q1")
		require.NoError(t, err)
		assert.Equal(t, body, string(again.Body))

		for _, b := range []string{`null`, `0`, `"s"`, `[]`, `{}`} {
			r := &store.Record{ID: "v", Time: t0, Body: []byte(b)}
			require.NoError(t, rs.PutRecord(ctx(t), alice, r), b)
			got, err := rs.GetRecord(ctx(t), alice, "v")
			require.NoError(t, err, b)
			assert.Equal(t, b, string(got.Body))
			assert.False(t, got.Active)
		}
	})
	t.Run("ETag", func(t *testing.T) {
		st := s.fresh(t)
		rs := records(t, st)
		first := record("r1", 0, true)
		first.ETag = store.CreateOnly
		require.NoError(t, rs.PutRecord(ctx(t), alice, first), "CreateOnly inserts a new record")
		require.NotEmpty(t, first.ETag)
		assert.NotEqual(t, store.CreateOnly, first.ETag)

		dup := record("r1", 5, false)
		dup.ETag = store.CreateOnly
		require.ErrorIs(t, rs.PutRecord(ctx(t), alice, dup), store.ErrConflict, "CreateOnly never overwrites")
		assert.Equal(t, store.CreateOnly, dup.ETag, "a failed write leaves the ETag")
		got, err := rs.GetRecord(ctx(t), alice, "r1")
		require.NoError(t, err)
		assert.True(t, got.Active)
		assert.Equal(t, first.ETag, got.ETag)

		// Two writers read the same version; the second write conflicts.
		a, err := rs.GetRecord(ctx(t), alice, "r1")
		require.NoError(t, err)
		b, err := rs.GetRecord(ctx(t), alice, "r1")
		require.NoError(t, err)
		a.Body, a.Active = []byte(`{"writer":"a"}`), false
		require.NoError(t, rs.PutRecord(ctx(t), alice, a), "a write with the current ETag succeeds")
		assert.NotEqual(t, first.ETag, a.ETag, "every write changes the ETag")
		b.Body = []byte(`{"writer":"b"}`)
		stale := b.ETag
		require.ErrorIs(t, rs.PutRecord(ctx(t), alice, b), store.ErrConflict, "b read before a wrote")
		assert.Equal(t, stale, b.ETag)
		b.ETag = "no-such-etag"
		require.ErrorIs(t, rs.PutRecord(ctx(t), alice, b), store.ErrConflict)
		cur, err := rs.GetRecord(ctx(t), alice, "r1")
		require.NoError(t, err)
		assert.Equal(t, `{"writer":"a"}`, string(cur.Body), "a failed write changes nothing")
		assert.False(t, cur.Active)
		assert.Equal(t, a.ETag, cur.ETag)

		// An empty ETag writes unconditionally.
		u := record("r1", 1, true)
		require.NoError(t, rs.PutRecord(ctx(t), alice, u))
		assert.NotEqual(t, a.ETag, u.ETag)
		cur, err = rs.GetRecord(ctx(t), alice, "r1")
		require.NoError(t, err)
		assert.Equal(t, `{"id":"r1"}`, string(cur.Body))
		assert.Equal(t, u.ETag, cur.ETag)
		require.NoError(t, rs.PutRecord(ctx(t), alice, record("fresh", 0, true)), "an empty ETag creates too")

		// A conditional write never recreates a deleted record, nor
		// creates one that never was.
		require.NoError(t, rs.DeleteRecord(ctx(t), alice, "r1"))
		require.ErrorIs(t, rs.PutRecord(ctx(t), alice, cur), store.ErrConflict)
		_, err = rs.GetRecord(ctx(t), alice, "r1")
		require.ErrorIs(t, err, store.ErrNotFound)
		never := record("never", 0, true)
		never.ETag = u.ETag
		require.ErrorIs(t, rs.PutRecord(ctx(t), alice, never), store.ErrConflict)
		_, err = rs.GetRecord(ctx(t), alice, "never")
		require.ErrorIs(t, err, store.ErrNotFound)
	})
	t.Run("Delete", func(t *testing.T) {
		st := s.fresh(t)
		rs := records(t, st)
		require.ErrorIs(t, rs.DeleteRecord(ctx(t), alice, "r1"), store.ErrNotFound)
		require.NoError(t, rs.PutRecord(ctx(t), alice, record("r1", 0, true)))
		require.NoError(t, rs.PutRecord(ctx(t), alice, record("r2", 0, true)))
		require.NoError(t, rs.DeleteRecord(ctx(t), alice, "r1"))
		require.ErrorIs(t, rs.DeleteRecord(ctx(t), alice, "r1"), store.ErrNotFound, "deleted once")
		_, err := rs.GetRecord(ctx(t), alice, "r1")
		require.ErrorIs(t, err, store.ErrNotFound)
		assert.Equal(t, []string{"r2"}, listRecords(t, rs, alice, store.RecordFilter{}))
		// Records are not documents of the other kinds.
		require.ErrorIs(t, st.DeleteDocument(ctx(t), alice, store.KindSessionSummary, "r2"), store.ErrNotFound)
		_, err = st.GetSession(ctx(t), alice, "r2")
		require.ErrorIs(t, err, store.ErrNotFound)
		ss, err := st.ListSessions(ctx(t), alice, store.SessionFilter{})
		require.NoError(t, err)
		assert.Empty(t, ss)
	})
	t.Run("List", func(t *testing.T) {
		st := s.fresh(t)
		rs := records(t, st)
		assert.Empty(t, listRecords(t, rs, alice, store.RecordFilter{}))
		// Put out of order; b and c share a time, so the id breaks the tie.
		for _, r := range []*store.Record{
			record("upd_b", 2, true), record("upd_a", 1, false), record("upd_c", 2, false),
			record("upd_d", 3, true), record("upd", 4, true), record("updx_1", 5, false),
			record("upe", 6, true), record("q_1", 0, true),
		} {
			require.NoError(t, rs.PutRecord(ctx(t), alice, r), r.ID)
		}
		all := []string{"upe", "updx_1", "upd", "upd_d", "upd_c", "upd_b", "upd_a", "q_1"}
		assert.Equal(t, all, listRecords(t, rs, alice, store.RecordFilter{}), "time, then id, both descending")

		// A prefix is a string prefix, not a word: "upd" holds upd and
		// updx_1; "upd_" holds neither; nothing is a pattern.
		assert.Equal(t, []string{"upd_d", "upd_c", "upd_b", "upd_a"}, listRecords(t, rs, alice, store.RecordFilter{Prefix: "upd_"}))
		assert.Equal(t, []string{"updx_1", "upd", "upd_d", "upd_c", "upd_b", "upd_a"}, listRecords(t, rs, alice, store.RecordFilter{Prefix: "upd"}))
		assert.Equal(t, []string{"upd"}, listRecords(t, rs, alice, store.RecordFilter{Prefix: "upd", Until: at(5), Limit: 1}))
		assert.Equal(t, []string{"upd_a"}, listRecords(t, rs, alice, store.RecordFilter{Prefix: "upd_a"}), "a whole id is its own prefix")
		for _, p := range []string{"upd%", "upd_%", "upd*", "up_", "UPD", "q_1x", "zzz"} {
			assert.Empty(t, listRecords(t, rs, alice, store.RecordFilter{Prefix: p}), "prefix %q", p)
		}

		assert.Equal(t, []string{"upe", "upd", "upd_d", "upd_b", "q_1"}, listRecords(t, rs, alice, store.RecordFilter{State: store.RecordActive}))
		assert.Equal(t, []string{"updx_1", "upd_c", "upd_a"}, listRecords(t, rs, alice, store.RecordFilter{State: store.RecordFinished}))
		assert.Equal(t, []string{"upd_c", "upd_a"}, listRecords(t, rs, alice, store.RecordFilter{Prefix: "upd_", State: store.RecordFinished}))

		assert.Equal(t, []string{"upd_c", "upd_b", "upd_a", "q_1"}, listRecords(t, rs, alice, store.RecordFilter{Until: at(3)}), "Until is strictly before")
		assert.Equal(t, []string{"upd_b", "q_1"}, listRecords(t, rs, alice, store.RecordFilter{Until: at(3), State: store.RecordActive}))
		assert.Empty(t, listRecords(t, rs, alice, store.RecordFilter{Until: at(0)}))
		assert.Equal(t, []string{"q_1"}, listRecords(t, rs, alice, store.RecordFilter{Until: at(0).Add(time.Nanosecond)}))

		assert.Equal(t, []string{"upe", "updx_1", "upd"}, listRecords(t, rs, alice, store.RecordFilter{Limit: 3}), "Limit keeps the most recent")
		assert.Equal(t, []string{"upd_c", "upd_b"}, listRecords(t, rs, alice, store.RecordFilter{Until: at(3), Limit: 2}))
		assert.Equal(t, all, listRecords(t, rs, alice, store.RecordFilter{Limit: 100}))

		// A rewrite moves a record in time and between states.
		moved := record("upd_a", 7, true)
		require.NoError(t, rs.PutRecord(ctx(t), alice, moved))
		assert.Equal(t, []string{"upd_a", "upe"}, listRecords(t, rs, alice, store.RecordFilter{State: store.RecordActive, Limit: 2}))

		got, err := rs.ListRecords(ctx(t), alice, store.RecordFilter{Prefix: "upd_a"})
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, moved.ETag, got[0].ETag, "a listed record carries its ETag")
		assert.Equal(t, `{"id":"upd_a"}`, string(got[0].Body))
		assert.True(t, got[0].Time.Equal(at(7)))
	})
	t.Run("NonASCIIPrefix", func(t *testing.T) {
		// Prefixes end in multi-byte runes, whose last byte a backend may
		// increment to bound a key range.
		st := s.fresh(t)
		rs := records(t, st)
		ids := []string{"q¿", "q¿a", "qÀ", "q¾", "日本", "日本語", "日曜", "🙂x", "🙃"}
		for i, id := range ids {
			require.NoError(t, rs.PutRecord(ctx(t), alice, record(id, i, true)), id)
		}
		assert.Equal(t, []string{"q¿a", "q¿"}, listRecords(t, rs, alice, store.RecordFilter{Prefix: "q¿"}))
		assert.Equal(t, []string{"日本語", "日本"}, listRecords(t, rs, alice, store.RecordFilter{Prefix: "日本"}))
		assert.Equal(t, []string{"🙂x"}, listRecords(t, rs, alice, store.RecordFilter{Prefix: "🙂"}))
	})
	t.Run("Invalid", func(t *testing.T) {
		st := s.fresh(t)
		rs := records(t, st)
		require.NoError(t, rs.PutRecord(ctx(t), alice, record("r1", 0, true)))
		for _, b := range []string{``, `{`, `{"a":1,}`, `nul`, `{} {}`, "\"\xff\"", `'s'`} {
			r := &store.Record{ID: "bad", Time: t0, Body: []byte(b)}
			assert.ErrorIs(t, rs.PutRecord(ctx(t), alice, r), store.ErrInvalid, "body %q", b)
		}
		huge := []byte(`"` + strings.Repeat("x", store.MaxDocumentBytes) + `"`)
		assert.ErrorIs(t, rs.PutRecord(ctx(t), alice, &store.Record{ID: "bad", Time: t0, Body: huge}), store.ErrInvalid, "body over MaxDocumentBytes")
		assert.ErrorIs(t, rs.PutRecord(ctx(t), alice, nil), store.ErrInvalid)
		for _, tm := range []time.Time{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)} {
			assert.ErrorIs(t, rs.PutRecord(ctx(t), alice, &store.Record{ID: "bad", Time: tm, Body: []byte(`{}`)}), store.ErrInvalid, "time %v", tm)
		}
		for _, id := range []string{"", " ", "a/b", "a?b", "a#b", `a\b`, "a\nb", "\xff", strings.Repeat("r", store.MaxIDBytes+1)} {
			assert.ErrorIs(t, rs.PutRecord(ctx(t), alice, &store.Record{ID: id, Time: t0, Body: []byte(`{}`)}), store.ErrInvalid, "id %q", id)
			_, err := rs.GetRecord(ctx(t), alice, id)
			assert.ErrorIs(t, err, store.ErrInvalid, "get id %q", id)
			assert.ErrorIs(t, rs.DeleteRecord(ctx(t), alice, id), store.ErrInvalid, "delete id %q", id)
		}
		for _, f := range []store.RecordFilter{{Limit: -1}, {State: "done"}, {Prefix: "\xff"}, {Prefix: strings.Repeat("r", store.MaxIDBytes+1)}} {
			_, err := rs.ListRecords(ctx(t), alice, f)
			assert.ErrorIs(t, err, store.ErrInvalid, "filter %+v", f)
		}
		for _, u := range badUserIDs {
			assert.ErrorIs(t, rs.PutRecord(ctx(t), u, record("r1", 0, true)), store.ErrInvalid, "user %q", u)
			_, err := rs.GetRecord(ctx(t), u, "r1")
			assert.ErrorIs(t, err, store.ErrInvalid, "user %q", u)
			_, err = rs.ListRecords(ctx(t), u, store.RecordFilter{})
			assert.ErrorIs(t, err, store.ErrInvalid, "user %q", u)
			assert.ErrorIs(t, rs.DeleteRecord(ctx(t), u, "r1"), store.ErrInvalid, "user %q", u)
		}
		assert.Equal(t, []string{"r1"}, listRecords(t, rs, alice, store.RecordFilter{}), "nothing invalid was written")
	})
	t.Run("Isolation", func(t *testing.T) {
		st := s.fresh(t)
		rs := records(t, st)
		a := record("r1", 0, true)
		a.Body = []byte(`{"owner":"alice"}`)
		require.NoError(t, rs.PutRecord(ctx(t), alice, a))
		_, err := rs.GetRecord(ctx(t), bob, "r1")
		require.ErrorIs(t, err, store.ErrNotFound)
		assert.Empty(t, listRecords(t, rs, bob, store.RecordFilter{}))
		require.ErrorIs(t, rs.DeleteRecord(ctx(t), bob, "r1"), store.ErrNotFound)
		stolen := record("r1", 0, true)
		stolen.ETag = a.ETag
		require.ErrorIs(t, rs.PutRecord(ctx(t), bob, stolen), store.ErrConflict, "alice's ETag means nothing for bob's record")

		// The same id under bob is bob's own record.
		b := record("r1", 1, false)
		b.Body = []byte(`{"owner":"bob"}`)
		b.ETag = store.CreateOnly
		require.NoError(t, rs.PutRecord(ctx(t), bob, b))
		for user, want := range map[string]string{alice: `{"owner":"alice"}`, bob: `{"owner":"bob"}`} {
			got, err := rs.GetRecord(ctx(t), user, "r1")
			require.NoError(t, err, user)
			assert.Equal(t, want, string(got.Body), user)
			assert.Equal(t, []string{"r1"}, listRecords(t, rs, user, store.RecordFilter{}), user)
		}
		require.NoError(t, rs.DeleteRecord(ctx(t), bob, "r1"))
		got, err := rs.GetRecord(ctx(t), alice, "r1")
		require.NoError(t, err, "bob's delete left alice's record")
		assert.Equal(t, a.ETag, got.ETag)

		// User ids are compared exactly.
		users := []string{"u", "U", "u%", "u_", "u' OR '1'='1", "🙂"}
		for _, u := range users {
			require.NoError(t, rs.PutRecord(ctx(t), u, &store.Record{ID: "r", Time: t0, Body: []byte(`"` + u + `"`)}), u)
		}
		require.NoError(t, st.DeleteUser(ctx(t), "u%"))
		for _, u := range users {
			got, err := rs.GetRecord(ctx(t), u, "r")
			if u == "u%" {
				assert.ErrorIs(t, err, store.ErrNotFound)
				continue
			}
			require.NoError(t, err, u)
			assert.Equal(t, `"`+u+`"`, string(got.Body))
		}
	})
	t.Run("DeleteUser", func(t *testing.T) {
		st := s.fresh(t)
		rs := records(t, st)
		for _, u := range []string{alice, bob} {
			require.NoError(t, rs.PutRecord(ctx(t), u, record("r1", 0, true)))
			require.NoError(t, rs.PutRecord(ctx(t), u, record("r2", 1, false)))
		}
		old, err := rs.GetRecord(ctx(t), alice, "r1")
		require.NoError(t, err)
		require.NoError(t, st.DeleteUser(ctx(t), alice))
		assert.Empty(t, listRecords(t, rs, alice, store.RecordFilter{}))
		_, err = rs.GetRecord(ctx(t), alice, "r1")
		require.ErrorIs(t, err, store.ErrNotFound)
		require.ErrorIs(t, rs.PutRecord(ctx(t), alice, old), store.ErrConflict, "a conditional write never recreates it")
		assert.Equal(t, []string{"r2", "r1"}, listRecords(t, rs, bob, store.RecordFilter{}), "the other user keeps hers")
	})
	t.Run("Closed", func(t *testing.T) {
		st := s.open(t)
		require.NotNil(t, st)
		rs, ok := st.(store.Records)
		if !ok {
			require.NoError(t, st.Close())
			t.Skipf("%T does not implement store.Records", st)
		}
		require.NoError(t, rs.PutRecord(ctx(t), alice, record("r1", 0, true)))
		require.NoError(t, st.Close())
		assert.ErrorIs(t, rs.PutRecord(ctx(t), alice, record("r2", 0, true)), store.ErrClosed)
		_, err := rs.GetRecord(ctx(t), alice, "r1")
		assert.ErrorIs(t, err, store.ErrClosed)
		_, err = rs.ListRecords(ctx(t), alice, store.RecordFilter{})
		assert.ErrorIs(t, err, store.ErrClosed)
		assert.ErrorIs(t, rs.DeleteRecord(ctx(t), alice, "r1"), store.ErrClosed)
	})
}
