package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/driver"
)

// openTest opens a store on a new file in t.TempDir, closed at cleanup.
func openTest(t *testing.T) (*Store, string) {
	t.Helper()
	path := newFile(t)
	s, err := Open(t.Context(), path, Config{Dimensions: 4})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s, path
}

// holdWriter starts a write that blocks inside its transaction until
// release is called, so that the writes queued meanwhile form one batch.
// release waits for the held write to finish.
func holdWriter(t *testing.T, s *Store) (release func()) {
	t.Helper()
	in, out := make(chan struct{}), make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- s.write(context.Background(), "hold", "", func(*writeTx) ([]change, error) {
			close(in)
			<-out
			return nil, nil
		})
	}()
	<-in
	return func() {
		close(out)
		require.NoError(t, <-errc)
	}
}

// queued returns the number of writes waiting for a batch.
func queued(s *Store) int {
	s.wq.mu.Lock()
	defer s.wq.mu.Unlock()
	return len(s.wq.reqs)
}

// batch queues the writes in order behind a held writer, releases it and
// returns each write's error: the writes run as one batch.
func batch(t *testing.T, s *Store, writes ...func() error) []error {
	t.Helper()
	release := holdWriter(t, s)
	errs := make([]error, len(writes))
	var wg sync.WaitGroup
	for i, w := range writes {
		wg.Go(func() { errs[i] = w() })
		require.Eventually(t, func() bool { return queued(s) == i+1 }, 5*time.Second, time.Millisecond, "write %d queued", i)
	}
	before := s.wstats.commits.Load()
	release()
	wg.Wait()
	// The held write's transaction, then the batch's (retried or not).
	assert.Equal(t, before+2, s.wstats.commits.Load(), "the queued writes committed in one transaction")
	return errs
}

// TestGroupCommitIsolatesFailures runs one batch in which writes fail in
// every way a write can — a conflict, a statement error, an error that
// ends the whole transaction — between writes that succeed: each failure
// is its own write's answer, and every other write is committed, on disk.
func TestGroupCommitIsolatesFailures(t *testing.T) {
	ctx := t.Context()
	s, path := openTest(t)
	sess := &store.Session{ID: "s1", StartTime: time.Now()}
	require.NoError(t, s.PutSession(ctx, "u1", sess))
	stale := &store.Session{ID: "s1", StartTime: time.Now(), Summary: "stale", ETag: "not-the-etag"}
	errBoom := errors.New("boom")
	errs := batch(t, s,
		func() error {
			return s.AppendTurn(ctx, "u1", &store.Turn{ID: "t1", SessionID: "s1", Time: time.Now(),
				Messages: []store.TurnMessage{{ID: "m1", Role: "user", Content: "first"}}})
		},
		func() error { return s.PutSession(ctx, "u1", stale) },
		func() error {
			return s.write(ctx, "bad statement", "u1", func(tx *writeTx) ([]change, error) {
				_, err := tx.ExecContext(ctx, `INSERT INTO turns (user_id) VALUES ('u1')`) // NOT NULL columns
				return nil, err
			})
		},
		func() error {
			return s.write(ctx, "ends the transaction", "u1", func(tx *writeTx) ([]change, error) {
				// A turn in the same session, then the transaction ends,
				// as SQLite ends it itself on an interrupted statement.
				if _, err := tx.ExecContext(ctx, `INSERT INTO turns (user_id, session_id, seq, turn_id, doc) VALUES ('u1', 's1', 2, 'ghost', '{}')`); err != nil {
					return nil, err
				}
				if _, err := tx.ExecContext(ctx, `ROLLBACK`); err != nil {
					return nil, err
				}
				return nil, errBoom
			})
		},
		func() error {
			return s.AppendTurn(ctx, "u1", &store.Turn{ID: "t2", SessionID: "s1", Time: time.Now(),
				Messages: []store.TurnMessage{{ID: "m2", Role: "user", Content: "second"}}})
		},
		func() error {
			in := &store.Interaction{ID: "i1", SessionID: "s1", Timestamp: time.Now(), FirstTurn: 1, LastTurn: 1,
				Content: "batched interaction", ContentVector: []float32{1, 0, 0, 0}}
			return s.PutInteraction(ctx, "u2", in)
		},
		func() error {
			return s.PutUserState(ctx, "u2", &store.UserState{SinceProfile: 7, ETag: store.CreateOnly})
		},
	)
	require.Len(t, errs, 7)
	assert.NoError(t, errs[0], "turn before the failures")
	assert.ErrorIs(t, errs[1], store.ErrConflict, "stale ETag")
	assert.ErrorContains(t, errs[2], "NOT NULL", "statement error")
	assert.ErrorIs(t, errs[3], errBoom, "the write that ended the transaction")
	assert.NoError(t, errs[4], "turn after the failures")
	assert.NoError(t, errs[5], "interaction")
	assert.NoError(t, errs[6], "user state")

	// What succeeded is on disk: a store opened afresh on the file sees it.
	s.Close()
	s2, err := Open(ctx, path, Config{Dimensions: 4})
	require.NoError(t, err)
	defer s2.Close()
	turns, err := s2.ListTurns(ctx, "u1", "s1", 0)
	require.NoError(t, err)
	require.Len(t, turns, 2, "both turns and no ghost")
	assert.Equal(t, []string{"t1", "t2"}, []string{turns[0].ID, turns[1].ID})
	assert.Equal(t, []int{1, 2}, []int{turns[0].Seq, turns[1].Seq}, "numbers as if the failed writes never ran")
	got, err := s2.GetSession(ctx, "u1", "s1")
	require.NoError(t, err)
	assert.Equal(t, sess.ETag, got.ETag, "the conflicting write changed nothing")
	_, err = s2.GetInteraction(ctx, "u2", "i1")
	assert.NoError(t, err)
	st, err := s2.GetUserState(ctx, "u2")
	require.NoError(t, err)
	assert.Equal(t, 7, st.SinceProfile)
}

// TestGroupCommitETagsInOneBatch checks that a conditional write sees the
// writes queued before it in its batch: of two writes under the same
// ETag, or two creations, the first wins and the second conflicts.
func TestGroupCommitETagsInOneBatch(t *testing.T) {
	ctx := t.Context()
	s, _ := openTest(t)
	base := &store.Session{ID: "s", StartTime: time.Now()}
	require.NoError(t, s.PutSession(ctx, "u", base))
	a := &store.Session{ID: "s", StartTime: time.Now(), Summary: "a", ETag: base.ETag}
	b := &store.Session{ID: "s", StartTime: time.Now(), Summary: "b", ETag: base.ETag}
	c1 := &store.Session{ID: "new", StartTime: time.Now(), Summary: "c1", ETag: store.CreateOnly}
	c2 := &store.Session{ID: "new", StartTime: time.Now(), Summary: "c2", ETag: store.CreateOnly}
	u1 := &store.UserState{SinceProfile: 1, ETag: store.CreateOnly}
	u2 := &store.UserState{SinceProfile: 2, ETag: store.CreateOnly}
	var seen string // what b's writer reads on its conflict
	errs := batch(t, s,
		func() error { return s.PutSession(ctx, "u", a) },
		func() error {
			err := s.PutSession(ctx, "u", b)
			if got, gerr := s.GetSession(ctx, "u", "s"); gerr == nil {
				seen = got.Summary
			}
			return err
		},
		func() error { return s.PutSession(ctx, "u", c1) },
		func() error { return s.PutSession(ctx, "u", c2) },
		func() error { return s.PutUserState(ctx, "u", u1) },
		func() error { return s.PutUserState(ctx, "u", u2) },
	)
	assert.NoError(t, errs[0])
	assert.ErrorIs(t, errs[1], store.ErrConflict)
	assert.NoError(t, errs[2])
	assert.ErrorIs(t, errs[3], store.ErrConflict)
	assert.NoError(t, errs[4])
	assert.ErrorIs(t, errs[5], store.ErrConflict)
	assert.Equal(t, base.ETag, b.ETag, "a failed write keeps its ETag")
	assert.Equal(t, "a", seen, "a conflict is answered once the write it lost to is committed")

	got, err := s.GetSession(ctx, "u", "s")
	require.NoError(t, err)
	assert.Equal(t, "a", got.Summary)
	assert.Equal(t, a.ETag, got.ETag)
	got, err = s.GetSession(ctx, "u", "new")
	require.NoError(t, err)
	assert.Equal(t, "c1", got.Summary)
	st, err := s.GetUserState(ctx, "u")
	require.NoError(t, err)
	assert.Equal(t, 1, st.SinceProfile)

	// The winner's new ETag holds for the next write.
	next := &store.Session{ID: "s", StartTime: time.Now(), Summary: "after", ETag: a.ETag}
	require.NoError(t, s.PutSession(ctx, "u", next))
}

// TestGroupCommitCancelledWhileQueued: a write whose context ends before
// a batch takes it returns the context's error and never runs.
func TestGroupCommitCancelledWhileQueued(t *testing.T) {
	s, _ := openTest(t)
	release := holdWriter(t, s)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		errc <- s.PutSession(ctx, "u", &store.Session{ID: "s", StartTime: time.Now()})
	}()
	require.Eventually(t, func() bool { return queued(s) == 1 }, 5*time.Second, time.Millisecond)
	cancel()
	assert.ErrorIs(t, <-errc, context.Canceled)
	release()
	_, err := s.GetSession(t.Context(), "u", "s")
	assert.ErrorIs(t, err, store.ErrNotFound, "the abandoned write did not run")
	require.NoError(t, s.PutSession(t.Context(), "u", &store.Session{ID: "s2", StartTime: time.Now()}), "the queue goes on")
	assert.Zero(t, queued(s))
}

// TestGroupCommitTakenRunsToItsEnd: a write whose caller's context ends
// once its batch has taken it runs to its end, committed and answered
// as such: its statements run under the batch's context, so that a
// cancelled caller interrupts no statement of the transaction its
// batch-mates share (the caller waits for the batch's answer anyway).
func TestGroupCommitTakenRunsToItsEnd(t *testing.T) {
	s, _ := openTest(t)
	ctx, cancel := context.WithCancel(t.Context())
	err := s.write(ctx, "cancelled while it runs", "u", func(tx *writeTx) ([]change, error) {
		cancel()
		_, err := tx.ExecContext(ctx, `INSERT INTO records (user_id, id, time, active, etag, body) VALUES ('u', 'r', '', 0, 'e', '{}')`)
		return nil, err
	})
	require.NoError(t, err)
	var n int
	require.NoError(t, s.r.QueryRow(`SELECT count(*) FROM records WHERE user_id = 'u' AND id = 'r'`).Scan(&n))
	assert.Equal(t, 1, n, "the write is committed")
}

// TestGroupCommitClosedWhileQueued: writes queued when the store closes
// are answered (committed, or store.ErrClosed), none left waiting.
func TestGroupCommitClosedWhileQueued(t *testing.T) {
	s, _ := openTest(t)
	release := holdWriter(t, s)
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		go func() { errs <- s.PutSession(context.Background(), "u", &store.Session{ID: fmt.Sprint("s", i)}) }()
	}
	require.Eventually(t, func() bool { return queued(s) == n }, 5*time.Second, time.Millisecond)
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	require.Eventually(t, s.closed.Load, 5*time.Second, time.Millisecond)
	release()
	for range n {
		select {
		case err := <-errs:
			if err != nil {
				assert.ErrorIs(t, err, store.ErrClosed)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a queued write was never answered")
		}
	}
	assert.NoError(t, <-closed)
}

// endTx is a write that ends the whole transaction and fails, as a write
// does whose statement SQLite interrupts: its batch-mates run again.
func endTx(ctx context.Context, s *Store, errEnd error) func() error {
	return func() error {
		return s.write(ctx, "ends the transaction", "", func(tx *writeTx) ([]change, error) {
			if _, err := tx.ExecContext(ctx, `ROLLBACK`); err != nil {
				return nil, err
			}
			return nil, errEnd
		})
	}
}

// TestGroupCommitRunAgainAnswersOnce: a write run again after its
// batch-mate ended the transaction answers as if it had run once.
func TestGroupCommitRunAgainAnswersOnce(t *testing.T) {
	ctx := t.Context()
	s, _ := openTest(t)
	rec := &store.DeletionRecord{Seq: 1, At: time.Now(), Reason: "forget_user", Subject: "subj", UserID: "u",
		Hash: "h1", Key: "key"}
	require.NoError(t, s.AppendDeletion(ctx, rec))
	errEnd := errors.New("end")
	var erased int
	errs := batch(t, s,
		func() error {
			var err error
			erased, err = s.EraseDeletionNames(ctx, "subj")
			return err
		},
		endTx(ctx, s, errEnd),
	)
	require.NoError(t, errs[0])
	assert.ErrorIs(t, errs[1], errEnd)
	assert.Equal(t, 1, erased, "records whose names were erased")
}

// TestGroupCommitConcurrentETagRaces races conditional writes from many
// goroutines, so that they meet in batches: every read-modify-write loop
// counts once, exactly one of the creations of one document wins, and
// concurrent appends number a session's turns without gaps or twins.
func TestGroupCommitConcurrentETagRaces(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, _ := openTest(t)
	require.NoError(t, s.PutSession(ctx, "u", &store.Session{ID: "counter", StartTime: time.Now()}))
	const workers, rounds = 16, 3
	var wg sync.WaitGroup
	var mu sync.Mutex
	created, conflicts := 0, 0
	errs := make(chan error, workers*(rounds+3))
	for w := range workers {
		wg.Go(func() {
			for range rounds {
				for { // add one to the counter under its ETag
					doc, err := s.GetSession(ctx, "u", "counter")
					if err != nil {
						errs <- err
						return
					}
					doc.State.TurnCounter++
					err = s.PutSession(ctx, "u", doc)
					if errors.Is(err, store.ErrConflict) {
						mu.Lock()
						conflicts++
						mu.Unlock()
						continue
					}
					if err != nil {
						errs <- err
					}
					break
				}
			}
			err := s.PutSession(ctx, "u", &store.Session{ID: "once", StartTime: time.Now(), Summary: fmt.Sprint(w), ETag: store.CreateOnly})
			switch {
			case err == nil:
				mu.Lock()
				created++
				mu.Unlock()
			case !errors.Is(err, store.ErrConflict):
				errs <- err
			}
			// Each worker appends its turn, and worker 0's turn again.
			for _, id := range []string{fmt.Sprint("t", w), "t0"} {
				if err := s.AppendTurn(ctx, "u", &store.Turn{ID: id, SessionID: "counter", Time: time.Now(),
					Messages: []store.TurnMessage{{ID: id, Role: "user", Content: id}}}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	doc, err := s.GetSession(ctx, "u", "counter")
	require.NoError(t, err)
	assert.Equal(t, workers*rounds, doc.State.TurnCounter, "no lost update")
	assert.Equal(t, 1, created, "one creation wins")
	turns, err := s.ListTurns(ctx, "u", "counter", 0)
	require.NoError(t, err)
	require.Len(t, turns, workers, "one turn a worker, the repeated one stored once")
	for i, tr := range turns {
		assert.Equal(t, i+1, tr.Seq)
	}
	t.Logf("%d conflicts retried; %d transactions for %d writes or more", conflicts, s.wstats.commits.Load(), workers*(rounds+3))
}

// TestGroupCommitPanicIsItsCallers: a write function that panics panics
// in its own caller; its batch-mates commit.
func TestGroupCommitPanicIsItsCallers(t *testing.T) {
	ctx := t.Context()
	s, _ := openTest(t)
	var recovered any
	errs := batch(t, s,
		func() error { return s.PutSession(ctx, "u", &store.Session{ID: "before", StartTime: time.Now()}) },
		func() (err error) {
			defer func() { recovered = recover() }()
			return s.write(ctx, "panics", "u", func(*writeTx) ([]change, error) { panic("boom") })
		},
		func() error { return s.PutSession(ctx, "u", &store.Session{ID: "after", StartTime: time.Now()}) },
	)
	assert.Equal(t, "boom", recovered)
	assert.NoError(t, errs[0])
	assert.NoError(t, errs[2])
	for _, id := range []string{"before", "after"} {
		_, err := s.GetSession(ctx, "u", id)
		assert.NoError(t, err, id)
	}
}

// cachedGen returns the generation of the user's cached set of kind, and
// whether there is one.
func cachedGen(s *Store, user string, kind store.Kind) (int64, bool) {
	s.cache.mu.Lock()
	e, ok := s.cache.m[cacheKey{user, kind}]
	s.cache.mu.Unlock()
	if !ok {
		return 0, false
	}
	set := e.Value.(*cacheEntry).set
	set.mu.RLock()
	defer set.mu.RUnlock()
	return set.gen, true
}

// TestGroupCommitTokenizesABatchTogether: the documents a batch writes,
// of several users, are tokenized in one pass at its end; each gets its
// terms row, a user's cached text index takes their tokens in place (no
// reload), and text search ranks them as FTS5 does.
func TestGroupCommitTokenizesABatchTogether(t *testing.T) {
	ctx := t.Context()
	s, path := openTest(t)
	put := func(user, id, content string) func() error {
		return func() error {
			return s.PutInteraction(ctx, user, &store.Interaction{ID: id, SessionID: "s", Timestamp: time.Now(),
				FirstTurn: 1, LastTurn: 1, Content: content})
		}
	}
	require.NoError(t, put("alice", "a0", "the first note about gardens")())
	require.NotEmpty(t, textHits(t, s, "alice", "gardens")) // alice's text index is cached now
	require.True(t, s.cache.hasText(cacheKey{"alice", store.KindInteraction}))

	errs := batch(t, s,
		put("alice", "a1", "tomatoes grow in gardens"),
		put("bob", "b1", "bob keeps bees in gardens"),
		put("alice", "a2", "an empty-ish note"),
		func() error { return s.DeleteDocument(ctx, "alice", store.KindInteraction, "a2") },
		put("alice", "a1", "tomatoes and basil grow in gardens"), // a1 again: its last text counts
		put("bob", "b2", ""),
	)
	for i, err := range errs {
		require.NoError(t, err, "write %d", i)
	}
	gen, err := readGen(ctx, dbOfStore(t, s), "alice", store.KindInteraction)
	require.NoError(t, err)
	cached, ok := cachedGen(s, "alice", store.KindInteraction)
	require.True(t, ok)
	assert.Equal(t, gen, cached, "alice's cached set took the batch in place")

	for _, user := range []string{"alice", "bob"} {
		sp, _ := specOf(store.KindInteraction)
		mine, _ := countTerms(t, path, sp, user)
		assert.Equal(t, 2, mine, "%s: every document has its terms row", user)
	}
	got := textHits(t, s, "alice", "basil gardens")
	require.Len(t, got, 2)
	assert.Equal(t, "a1", got[0].ID)
	assert.Empty(t, textHits(t, s, "alice", "empty"), "the deleted document is gone from the index")
	assert.Equal(t, []string{"b1"}, idsOf(textHits(t, s, "bob", "bees")))
}

func dbOfStore(t *testing.T, s *Store) *sql.DB {
	t.Helper()
	var db *sql.DB
	require.True(t, s.As(&db))
	return db
}

func idsOf(hits []driver.Scored) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

// TestGroupCommitTermsOfSessionsWithoutText: a session with no indexed
// text (no summary, no key topics: a live session's state, a coordination
// record) costs its write no terms row; the sessions with text of the same
// batch get theirs, a load reaches the bare one without fault, and when it
// gains a summary it is tokenized and found.
func TestGroupCommitTermsOfSessionsWithoutText(t *testing.T) {
	ctx := t.Context()
	s, path := openTest(t)
	put := func(d *store.Session) func() error {
		return func() error { return s.PutSession(ctx, "alice", d) }
	}
	now := time.Now()
	bare := &store.Session{ID: "bare", StartTime: now, State: store.SessionState{CumulativeSummary: `{"queued":"x"}`}}
	topics := &store.Session{ID: "topics", StartTime: now, KeyTopics: []string{"orchards"}}
	summed := &store.Session{ID: "summed", StartTime: now, Summary: "pears ripen in the orchard"}
	for i, err := range batch(t, s, put(bare), put(topics), put(summed)) {
		require.NoError(t, err, "write %d", i)
	}
	sp, _ := specOf(store.KindSessionSummary)
	mine, _ := countTerms(t, path, sp, "alice")
	assert.Equal(t, 2, mine, "the sessions with text have their terms rows")
	var rows []termsOf
	for _, id := range []string{"bare", "topics", "summed"} {
		got, err := readTerms(ctx, dbOfStore(t, s), "alice", sp, []string{id}, true)
		require.NoError(t, err)
		require.Len(t, got, 1)
		rows = append(rows, got[0])
	}
	assert.True(t, rows[0].missing, "no text: no terms row")
	assert.Equal(t, []termFreq{{"orchard", 1}}, rows[1].terms.terms, "key topics are tokenized (porter: orchards → orchard)")
	assert.Equal(t, 5, rows[2].terms.length)

	assert.ElementsMatch(t, []string{"topics", "summed"}, idsOf(sessionTextHits(t, s, "alice", "orchard"))) // cached now
	bare.Summary = "the bare session now mentions apricots"
	require.NoError(t, s.PutSession(ctx, "alice", bare))
	assert.Equal(t, []string{"bare"}, idsOf(sessionTextHits(t, s, "alice", "apricots")), "a summary written later is searchable")
	bare.Summary = ""
	require.NoError(t, s.PutSession(ctx, "alice", bare))
	assert.Empty(t, sessionTextHits(t, s, "alice", "apricots"), "and gone from the index when the summary is")
}

func sessionTextHits(t *testing.T, s *Store, user, q string) []driver.Scored {
	t.Helper()
	hits, err := s.SearchSessions(t.Context(), user, store.SearchRequest{Text: q, TopK: 20})
	require.NoError(t, err)
	return textScores(hits, func(d *store.Session) string { return d.ID })
}
