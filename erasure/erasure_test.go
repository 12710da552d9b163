package erasure_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/erasure"
	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/mem"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

func openSQLite(t *testing.T) (*sqlite.Store, *sql.DB) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), sqlitetest.NewFile(t), sqlite.Config{Dimensions: 4})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	var db *sql.DB
	require.True(t, st.As(&db), "the SQLite store hands out its *sql.DB")
	return st, db
}

// fill appends three records: two about u1, one about u2.
func fill(t *testing.T, l *erasure.Log) []*store.DeletionRecord {
	t.Helper()
	ctx := context.Background()
	var recs []*store.DeletionRecord
	for _, c := range []struct {
		user, reason string
		items        []erasure.Item
	}{
		{"u1", "forget_insight", []erasure.Item{{Kind: store.KindInsight, ID: "ins-1", Action: erasure.Deleted}, {Kind: store.KindInsight, ID: "longterm-u1", Action: erasure.Rewritten}}},
		{"u2", "forget_session", []erasure.Item{{Kind: store.KindSessionSummary, ID: "tuesday", Action: erasure.Deleted}, {Kind: store.KindTurn, ID: "tuesday", Action: erasure.Deleted, Count: 12}}},
		{"u1", "forget_interaction", []erasure.Item{{Kind: store.KindInteraction, ID: "int-9", Action: erasure.Deleted}}},
	} {
		rec, err := l.Append(ctx, c.user, c.reason, c.items, true)
		require.NoError(t, err)
		recs = append(recs, rec)
	}
	return recs
}

func TestAChainOfRecordsVerifies(t *testing.T) {
	ctx := context.Background()
	for name, st := range map[string]store.DeletionLog{"mem": mem.New(mem.Config{}), "sqlite": func() store.DeletionLog { s, _ := openSQLite(t); return s }()} {
		t.Run(name, func(t *testing.T) {
			l := erasure.New(st, erasure.Config{})
			head, err := l.Verify(ctx)
			require.NoError(t, err, "an empty log verifies")
			assert.Zero(t, head.Seq)

			recs := fill(t, l)
			head, err = l.Verify(ctx)
			require.NoError(t, err)
			assert.Equal(t, erasure.Head{Seq: 3, Hash: recs[2].Hash}, head)
			for i, rec := range recs {
				assert.EqualValues(t, i+1, rec.Seq)
				if i > 0 {
					assert.Equal(t, recs[i-1].Hash, rec.Prev, "each record carries the hash of the one before")
				}
			}
			assert.NotEmpty(t, recs[0].Key, "the first record keeps the log's own key")
			assert.Empty(t, recs[1].Key)
			u1, err := l.Subject(ctx, "u1")
			require.NoError(t, err)
			assert.Equal(t, u1, recs[0].Subject)
			assert.Equal(t, u1, recs[2].Subject)
			assert.NotEqual(t, u1, recs[1].Subject)
			assert.NotContains(t, u1, "u1")
			assert.Equal(t, 12, recs[1].Items[1].Count)
			assert.Equal(t, 1, recs[1].Items[0].Count, "zero means one")
		})
	}
}

// Every way of changing the log that a chain can show is found, at the
// record where it happened.
func TestTamperingIsFoundAtItsRecord(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		tamper []string
		seq    int64
		why    string
	}{
		{"a reason changed", []string{`UPDATE deletion_log SET reason = 'routine' WHERE seq = 2`}, 2, "content does not match its hash"},
		{"a record removed", []string{`DELETE FROM deletion_log WHERE seq = 2`}, 2, "record missing"},
		{"a clear user id changed", []string{`UPDATE deletion_log SET user_id = 'u3' WHERE seq = 1`}, 1, "clear user id does not match"},
		{"a clear document id changed", []string{`UPDATE deletion_log SET items = replace(items, 'int-9', 'int-8') WHERE seq = 3`}, 3, "item 0: clear id does not match"},
		{"a count lowered", []string{`UPDATE deletion_log SET items = replace(items, '"count":12', '"count":2') WHERE seq = 2`}, 2, "content does not match its hash"},
		{"a record's hash replaced", []string{`UPDATE deletion_log SET hash = iif(substr(hash, 1, 1) = '0', '1', '0') || substr(hash, 2) WHERE seq = 1`}, 1, "content does not match its hash"},
		{"two records swapped", []string{`UPDATE deletion_log SET seq = 99 WHERE seq = 2`, `UPDATE deletion_log SET seq = 2 WHERE seq = 3`, `UPDATE deletion_log SET seq = 3 WHERE seq = 99`}, 2, "does not carry the hash of the record before it"},
		{"the first record's key replaced", []string{`UPDATE deletion_log SET key = iif(substr(key, 1, 1) = '0', '1', '0') || substr(key, 2) WHERE seq = 1`}, 1, "content does not match its hash"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, db := openSQLite(t)
			l := erasure.New(st, erasure.Config{})
			fill(t, l)
			_, err := l.Verify(ctx)
			require.NoError(t, err)
			for _, q := range c.tamper {
				res, err := db.ExecContext(ctx, q)
				require.NoError(t, err)
				n, err := res.RowsAffected()
				require.NoError(t, err)
				require.EqualValues(t, 1, n, "the tampering touched a record: %s", q)
			}

			head, err := l.Verify(ctx)
			require.ErrorIs(t, err, erasure.ErrBroken)
			var broken *erasure.BrokenError
			require.True(t, errors.As(err, &broken))
			assert.Equal(t, c.seq, broken.Seq)
			assert.Contains(t, broken.Why, c.why)
			assert.Equal(t, c.seq-1, head.Seq, "the head is the last record that verified")
		})
	}
}

// Erasing a user's names blanks their clear ids and leaves the chain, and
// every other user's names, as they were.
func TestEraseNamesKeepsTheChain(t *testing.T) {
	ctx := context.Background()
	st, _ := openSQLite(t)
	l := erasure.New(st, erasure.Config{})
	recs := fill(t, l)
	n, err := l.EraseNames(ctx, "u1")
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	head, err := l.Verify(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 3, head.Seq)
	got, err := st.ListDeletions(ctx, 0, 0)
	require.NoError(t, err)
	require.Len(t, got, 3)
	for i, rec := range got {
		assert.Equal(t, recs[i].Hash, rec.Hash)
		assert.Equal(t, recs[i].Subject, rec.Subject)
		for j, it := range rec.Items {
			assert.Equal(t, recs[i].Items[j].IDHash, it.IDHash)
		}
	}
	assert.Empty(t, got[0].UserID)
	assert.Empty(t, got[0].Items[0].ID)
	assert.Empty(t, got[2].Items[0].ID)
	assert.Equal(t, "u2", got[1].UserID, "another user's names stay")
	assert.Equal(t, "tuesday", got[1].Items[0].ID)

	n, err = erasure.New(mem.New(mem.Config{}), erasure.Config{}).EraseNames(ctx, "u1")
	require.NoError(t, err, "an empty log names nobody")
	assert.Zero(t, n)
}

// A log started with a key of the caller's keeps only a check of it, and
// refuses any other key, or none.
func TestAKeyOfTheCallers(t *testing.T) {
	ctx := context.Background()
	st, _ := openSQLite(t)
	key := []byte("a secret of the operator's, 32 b")
	recs := fill(t, erasure.New(st, erasure.Config{Key: key}))
	assert.NotContains(t, recs[0].Key, fmt.Sprintf("%x", key), "the key itself is not kept")
	_, err := erasure.New(st, erasure.Config{Key: key}).Verify(ctx)
	require.NoError(t, err)

	_, err = erasure.New(st, erasure.Config{Key: []byte("another key")}).Verify(ctx)
	assert.ErrorIs(t, err, erasure.ErrWrongKey)
	_, err = erasure.New(st, erasure.Config{Key: []byte("another key")}).Append(ctx, "u1", "forget_user", nil, false)
	assert.ErrorIs(t, err, erasure.ErrWrongKey)
	_, err = erasure.New(st, erasure.Config{}).Append(ctx, "u1", "forget_user", nil, false)
	assert.ErrorIs(t, err, erasure.ErrWrongKey)
}

// Appenders racing in several goroutines (as several processes would on
// one file) all land, numbered without gaps, in one chain.
func TestConcurrentAppendersMakeOneChain(t *testing.T) {
	ctx := context.Background()
	st, _ := openSQLite(t)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for g := range 8 {
		wg.Go(func() {
			l := erasure.New(st, erasure.Config{MaxAttempts: 100})
			for i := range 5 {
				_, err := l.Append(ctx, fmt.Sprintf("u%d", g), "forget_insight", []erasure.Item{{Kind: store.KindInsight, ID: fmt.Sprint(i), Action: erasure.Deleted}}, true)
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	head, err := erasure.New(st, erasure.Config{}).Verify(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 40, head.Seq)
}

func TestAppendRefusesWhatItCannotRecord(t *testing.T) {
	l := erasure.New(mem.New(mem.Config{}), erasure.Config{Now: func() time.Time { return time.Unix(0, 0) }})
	_, err := l.Append(context.Background(), "", "forget_user", nil, false)
	assert.ErrorIs(t, err, store.ErrInvalid)
	_, err = l.Append(context.Background(), "u1", "", nil, false)
	assert.ErrorIs(t, err, store.ErrInvalid)
}

// rechain rewrites the log's hashes of records from through to (0: the
// last) the way someone without the key can: plain SHA-256 of each
// record's chained part, each carrying the one before — what an unkeyed
// chain cannot tell from the original.
func rechain(t *testing.T, st *sqlite.Store, db *sql.DB, from, to int64) {
	t.Helper()
	ctx := context.Background()
	recs, err := st.ListDeletions(ctx, 0, 0)
	require.NoError(t, err)
	prev := ""
	for _, rec := range recs {
		if rec.Seq >= from && (to == 0 || rec.Seq <= to) {
			rec.Prev = prev
			rec.Hash = erasure.PlainHash(rec)
			_, err := db.ExecContext(ctx, `UPDATE deletion_log SET prev = ?, hash = ? WHERE seq = ?`, rec.Prev, rec.Hash, rec.Seq)
			require.NoError(t, err)
		}
		prev = rec.Hash
	}
}

// Without a key of the caller's, a record rewritten and the chain
// recomputed after it verifies: a plain hash proves nothing against
// someone who can write the store. With Config.Key the records' hashes are
// keyed, and the same rewrite is found at its record.
func TestAKeyedChainFindsARewriteRechainedWithoutTheKey(t *testing.T) {
	ctx := context.Background()
	rewrite := func(t *testing.T, key []byte) error {
		st, db := openSQLite(t)
		fill(t, erasure.New(st, erasure.Config{Key: key}))
		_, err := db.ExecContext(ctx, `UPDATE deletion_log SET reason = 'routine' WHERE seq = 2`)
		require.NoError(t, err)
		rechain(t, st, db, 2, 0)
		_, err = erasure.New(st, erasure.Config{Key: key}).Verify(ctx)
		return err
	}
	assert.NoError(t, rewrite(t, nil), "an unkeyed chain cannot show it")

	err := rewrite(t, []byte("a secret of the operator's, 32 b"))
	require.ErrorIs(t, err, erasure.ErrBroken)
	var broken *erasure.BrokenError
	require.True(t, errors.As(err, &broken))
	assert.EqualValues(t, 2, broken.Seq)
}

// A log started with a key before records had keyed hashes keeps
// verifying; what is appended to it now has keyed hashes, which then
// guard the plain records before them. A log started now with a key
// cannot be turned back into plain hashes.
func TestPlainAndKeyedRecordsInOneChain(t *testing.T) {
	ctx := context.Background()
	key := []byte("a secret of the operator's, 32 b")
	st, db := openSQLite(t)
	fill(t, erasure.New(st, erasure.Config{Key: key}))
	// The log as the previous version wrote it: its check of the key,
	// plain hashes.
	_, err := db.ExecContext(ctx, `UPDATE deletion_log SET key = ? WHERE seq = 1`, erasure.LegacyKeyCheck(key))
	require.NoError(t, err)
	rechain(t, st, db, 1, 0)
	l := erasure.New(st, erasure.Config{Key: key})
	head, err := l.Verify(ctx)
	require.NoError(t, err, "the earlier records keep verifying")
	assert.EqualValues(t, 3, head.Seq)

	rec, err := l.Append(ctx, "u1", "forget_insight", []erasure.Item{{Kind: store.KindInsight, ID: "ins-2", Action: erasure.Deleted}}, true)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(rec.Hash, "hmac-sha256:"), "a new record's hash is keyed: %s", rec.Hash)
	_, err = l.Verify(ctx)
	require.NoError(t, err)

	// An earlier record rewritten, the plain records re-chained: the keyed
	// record after them no longer matches. (Turning the keyed records back
	// into plain ones too goes unseen in such a log: only a head kept
	// elsewhere shows it.)
	_, err = db.ExecContext(ctx, `UPDATE deletion_log SET reason = 'routine' WHERE seq = 1`)
	require.NoError(t, err)
	rechain(t, st, db, 1, 3)
	_, err = l.Verify(ctx)
	var broken *erasure.BrokenError
	require.ErrorAs(t, err, &broken)
	assert.EqualValues(t, 4, broken.Seq)

	// A log started with the key: every record keyed, and plain hashes
	// made without the key are refused from the first record on.
	st2, db2 := openSQLite(t)
	fill(t, erasure.New(st2, erasure.Config{Key: key}))
	rechain(t, st2, db2, 1, 0)
	_, err = erasure.New(st2, erasure.Config{Key: key}).Verify(ctx)
	require.ErrorAs(t, err, &broken)
	assert.EqualValues(t, 1, broken.Seq)
	assert.Contains(t, broken.Why, "plain hash")
}
