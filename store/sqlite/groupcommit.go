package sqlite

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmemory/agentmemory/store"
)

// Group commit: concurrent writes share one transaction, and so one
// commit and one fsync. A caller queues its write and then either waits
// for its answer or, when no batch is running, becomes the leader: it
// takes every queued write (up to maxBatch), runs each in the order it
// was queued under a savepoint of one BEGIN IMMEDIATE transaction,
// tokenizes the documents written without a terms row in one pass,
// commits once, updates the vector cache and answers each caller. A write
// that fails is rolled back to its savepoint and answered with its own
// error once the others have committed; its batch-mates go on. A write
// that ends the whole transaction (SQLite rolls back the transaction
// itself on some errors, an interrupted statement among them) is answered
// with its error and the others run again in a new transaction; a commit
// that fails is retried with each write alone, so every caller gets the
// answer of its own write. A write is answered only after the commit that holds it, so
// what a caller was told succeeded is on disk (synchronous=FULL).

// maxBatch bounds the writes one transaction commits together.
const maxBatch = 64

// States of a queued write.
const (
	writeQueued    int32 = iota // waiting for a leader
	writeTaken                  // in a batch: it will be answered
	writeAbandoned              // its caller gave up before a batch took it
)

// writeQueue holds the writes waiting for a batch.
type writeQueue struct {
	mu   sync.Mutex
	reqs []*writeReq
	// lead is held (capacity 1) by the caller running a batch.
	lead chan struct{}
}

// writeReq is one caller's write.
type writeReq struct {
	ctx    context.Context
	op     string
	userID string
	fn     func(tx *writeTx) ([]change, error)
	queued time.Time
	state  atomic.Int32
	done   chan struct{} // closed once err is set
	err    error
	// panicked holds what fn panicked with, panicked again in its caller
	// once the batch is done with (the batch-mates go on).
	panicked any
	// What the write's run changed, applied to the cache after the commit.
	changes []change
	bumps   []genBump
	// untokenized are its upserts without a terms row, tokenized with
	// the batch's (storeBatchTerms).
	untokenized []untokenized
}

// untokenized is an upserted document of a write that has no terms row:
// changes[change] upserted the document rid of kind.
type untokenized struct {
	kind   store.Kind
	rid    int64
	change int
}

// genBump is a generation changed by a write: old to new.
type genBump struct {
	kind     store.Kind
	old, new int64
}

// write runs fn in a write transaction for userID, bumping the generation
// of every kind fn reports changed, and once that transaction has
// committed applies the changes to the vector cache. fn returns the
// changes it made. fn may run more than once (in a new transaction, when
// a batch-mate's failure ended the first), so it must set the variables
// it shares with the caller afresh on every run.
func (s *Store) write(ctx context.Context, op, userID string, fn func(tx *writeTx) ([]change, error)) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	r := &writeReq{ctx: ctx, op: op, userID: userID, fn: fn, queued: time.Now(), done: make(chan struct{})}
	s.wq.mu.Lock()
	s.wq.reqs = append(s.wq.reqs, r)
	s.wq.mu.Unlock()
	for {
		select {
		case <-r.done:
			return r.answer()
		case s.wq.lead <- struct{}{}:
			func() {
				defer func() { <-s.wq.lead }()
				s.runBatch()
			}()
		case <-ctx.Done():
			if r.state.CompareAndSwap(writeQueued, writeAbandoned) {
				return s.fail(op, ctx.Err())
			}
			<-r.done // taken: its batch answers it
			return r.answer()
		}
	}
}

// answer is r's outcome for its caller, once done: its error, or the
// panic of its function.
func (r *writeReq) answer() error {
	if r.panicked != nil {
		panic(r.panicked)
	}
	return r.err
}

// take removes up to maxBatch queued writes from the queue, in order,
// marking them taken, and drops the abandoned ones it passes.
func (q *writeQueue) take() []*writeReq {
	q.mu.Lock()
	defer q.mu.Unlock()
	var batch []*writeReq
	n := 0
	for ; n < len(q.reqs) && len(batch) < maxBatch; n++ {
		if r := q.reqs[n]; r.state.CompareAndSwap(writeQueued, writeTaken) {
			batch = append(batch, r)
		}
	}
	rest := copy(q.reqs, q.reqs[n:])
	clear(q.reqs[rest:])
	q.reqs = q.reqs[:rest]
	return batch
}

// runBatch commits the writes queued now, as one batch.
func (s *Store) runBatch() {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	batch := s.wq.take()
	if s.closed.Load() {
		for _, r := range batch {
			r.finish(store.ErrClosed)
		}
		return
	}
	for len(batch) > 0 {
		batch = s.commit(batch)
	}
	s.ckpt.committed()
	s.wstmts.prepareMet(context.Background())
}

// finish answers the caller of r.
func (r *writeReq) finish(err error) {
	r.err = err
	close(r.done)
}

// savepoint names the savepoint of each write of a batch; each is
// released before the next is set.
const savepoint = "am_write"

// commit runs batch in one transaction and commits it, answering every
// write, except those it returns: the batch-mates of a write that ended
// the transaction, to run again in a new one. It is called under wmu.
func (s *Store) commit(batch []*writeReq) []*writeReq {
	ctx := context.WithoutCancel(batch[0].ctx) // the batch is everyone's
	start := time.Now()
	defer func() { s.wstats.busy.Add(int64(time.Since(start))) }()
	sqlTx, err := s.begin(ctx)
	if err != nil {
		for _, r := range batch {
			r.finish(s.fail(r.op, err))
		}
		return nil
	}
	defer sqlTx.Rollback()
	tx := &writeTx{Tx: sqlTx, ctx: ctx, stmts: s.wstmts}
	alone := len(batch) == 1
	ok := make([]*writeReq, 0, len(batch))
	// The failed writes are answered last, after the commit of the
	// others: a write that failed on an earlier write's ETag, reading
	// again, finds that write's.
	type failure struct {
		r   *writeReq
		err error
	}
	var failed []failure
	defer func() {
		for _, f := range failed {
			f.r.finish(f.err)
		}
	}()
	for i, r := range batch {
		if alone {
			if err := s.run(tx, r); err != nil {
				r.finish(err)
				return nil
			}
			ok = append(ok, r)
			break
		}
		if _, err := tx.ExecContext(ctx, `SAVEPOINT `+savepoint); err != nil {
			// Nothing names a culprit: each write again, alone.
			tx.Rollback()
			s.commitEach(append(ok, batch[i:]...))
			return nil
		}
		err := s.run(tx, r)
		if err == nil {
			if _, rerr := tx.ExecContext(ctx, `RELEASE `+savepoint); rerr != nil {
				// The transaction ended during r (an error its run set
				// aside): r's statements are not all in it.
				r.finish(s.fail(r.op, rerr))
				return append(ok, batch[i+1:]...)
			}
			ok = append(ok, r)
			continue
		}
		failed = append(failed, failure{r, err})
		if _, rerr := tx.ExecContext(ctx, `ROLLBACK TO `+savepoint+`; RELEASE `+savepoint); rerr != nil {
			// r's failure ended the transaction: the others again.
			return append(ok, batch[i+1:]...)
		}
	}
	if len(ok) == 0 {
		return nil
	}
	s.storeBatchTerms(ctx, tx, ok)
	committing := time.Now()
	err = tx.Commit()
	s.wstats.commit.Add(int64(time.Since(committing)))
	if err != nil {
		if alone {
			ok[0].finish(s.fail(ok[0].op, err))
			return nil
		}
		// Whose write made the commit fail is unknown: each alone.
		s.commitEach(ok)
		return nil
	}
	s.wstats.commits.Add(1)
	s.wstats.writes.Add(int64(len(ok)))
	var wait time.Duration
	for _, r := range ok {
		wait += start.Sub(r.queued)
	}
	s.wstats.wait.Add(int64(wait))
	for _, r := range ok {
		for _, b := range r.bumps {
			var cs []change
			for _, c := range r.changes {
				if c.kind == b.kind {
					cs = append(cs, c)
				}
			}
			s.cache.apply(cacheKey{r.userID, b.kind}, b.old, b.new, cs)
		}
		r.finish(nil)
	}
	return nil
}

// commitEach commits each write of batch in a transaction of its own.
func (s *Store) commitEach(batch []*writeReq) {
	for _, r := range batch {
		s.commit([]*writeReq{r})
	}
}

// run runs r's write in tx: its function, its documents' terms rows and
// its generation bumps, which it keeps in r for the cache.
func (s *Store) run(tx *writeTx, r *writeReq) (err error) {
	ctx, op, userID := r.ctx, r.op, r.userID
	r.changes, r.bumps, r.untokenized = nil, nil, nil
	defer func() {
		// A panic is its write's failure: the batch goes on without it,
		// and its caller panics (answer).
		if p := recover(); p != nil {
			r.panicked = p
			err = fmt.Errorf("sqlite: %s: the write panicked: %v", op, p)
		}
	}()
	changes, err := r.fn(tx)
	if err != nil {
		if isStoreErr(err) {
			return err
		}
		return s.fail(op, err)
	}
	untok, err := s.readChangeTerms(ctx, tx, userID, changes)
	if err != nil {
		// The write stands: a document without its terms row is
		// tokenized when loaded. The user's cached sets go (apply drops a
		// set that an upsert without tokens reaches).
		s.log.Warn("read the tokens of written documents", "err", err)
		for i := range changes {
			changes[i].terms = nil
		}
		untok = nil
	}
	var bumps []genBump
	for _, c := range changes {
		seen := false
		for _, b := range bumps {
			seen = seen || b.kind == c.kind
		}
		if seen {
			continue
		}
		// The generation replaced matters only to a set cached here, which
		// apply takes the changes into in place when it is current. Without
		// one the read is skipped, and a set cached before the commit is
		// marked stale instead (unknownGen is no set's generation).
		old := int64(unknownGen)
		if s.cache.has(cacheKey{userID, c.kind}) {
			if old, err = readGen(ctx, tx, userID, c.kind); err != nil {
				return s.fail(op, err)
			}
		}
		g := newGen()
		if _, err := tx.ExecContext(ctx, upsertGenSQL, userID, string(c.kind), g); err != nil {
			return s.fail(op, err)
		}
		bumps = append(bumps, genBump{c.kind, old, g})
	}
	r.changes, r.bumps, r.untokenized = changes, bumps, untok
	return nil
}

// readChangeTerms fills the tokens of the upserts whose kind has a cached
// text index for the user from their terms rows (terms.go), and returns
// the upserts that have none: the batch tokenizes them together
// (storeBatchTerms). An upsert without indexed text has no tokens and
// is left without a terms row.
func (s *Store) readChangeTerms(ctx context.Context, tx txn, userID string, changes []change) ([]untokenized, error) {
	var untok []untokenized
	for _, kind := range store.Kinds {
		var idx []int
		var ids []string
		for i, c := range changes {
			switch {
			case c.kind != kind || c.upsert == nil:
			case c.noText:
				// No tokens, and no terms row to read or write: a document
				// without one is tokenized when a load reaches it.
				changes[i].terms = &docTerms{}
			default:
				idx = append(idx, i)
				ids = append(ids, c.upsert.id)
			}
		}
		if len(ids) == 0 {
			continue
		}
		sp, _ := specOf(kind)
		terms, err := readTerms(ctx, tx, userID, sp, ids, s.cache.hasText(cacheKey{userID, kind}))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", kind, err)
		}
		for j, i := range idx {
			changes[i].terms = terms[j].terms
			if terms[j].missing {
				untok = append(untok, untokenized{kind, terms[j].rid, i})
			}
		}
	}
	return untok, nil
}

// storeBatchTerms tokenizes the documents that the committed writes of a
// batch upserted without a terms row, all of a kind at once, stores their
// terms rows and gives the writes' changes their tokens. A failure leaves
// the writes standing without the rows (their documents are tokenized
// when loaded; a cached set they reach is dropped).
func (s *Store) storeBatchTerms(ctx context.Context, tx txn, batch []*writeReq) {
	for _, kind := range store.Kinds {
		var rids []int64
		for _, r := range batch {
			for _, u := range r.untokenized {
				if u.kind == kind {
					rids = append(rids, u.rid)
				}
			}
		}
		if len(rids) == 0 {
			continue
		}
		slices.Sort(rids)
		rids = slices.Compact(rids)
		sp, _ := specOf(kind)
		fresh, err := tokenizeDocs(ctx, tx, sp, rids)
		if err == nil {
			err = insertDocTerms(ctx, tx, sp, fresh)
		}
		if err != nil {
			s.log.Warn("store the tokens of written documents", "kind", kind, "err", err)
			fresh = nil
		}
		for _, r := range batch {
			for _, u := range r.untokenized {
				if u.kind == kind {
					r.changes[u.change].terms = fresh[u.rid]
				}
			}
		}
	}
}
