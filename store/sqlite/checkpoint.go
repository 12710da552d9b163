package sqlite

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agentmemory/agentmemory/store"
)

// The WAL's checkpoints: copying its committed pages into the database
// file, so that it can start over from its beginning.
//
// SQLite's own, automatic, checkpoint runs inside the commit that takes
// the WAL past 1,000 pages: that commit, and every write queued behind it
// for the one writer, waits for the pages to be copied and the database
// file's fsync. The writer turns it off (wal_autocheckpoint 0, see dsn)
// and a goroutine of the store runs a passive checkpoint on a read
// connection instead, at most once every checkpointEvery, after the
// commits that follow one: it copies the pages no reader still needs
// while the writer goes on appending to the WAL. Durability is the
// WAL's, whose commits are synced (synchronous=FULL): a checkpoint cut
// short by a crash is run again from the WAL at the next open.

// checkpointEvery is how long the checkpointer waits after a commit
// before it copies the WAL: the commits of that interval are copied in
// one pass, with one fsync of the database file.
const checkpointEvery = 200 * time.Millisecond

// checkpointer runs the store's passive checkpoints (checkpoints).
type checkpointer struct {
	// mu serialises this process's checkpoints, passive and truncating.
	mu sync.Mutex
	// due, of capacity 1, holds a token once a commit has added to the
	// WAL since the checkpointer last looked.
	due  chan struct{}
	done chan struct{} // closed when the goroutine has returned
	// covered is the count of commits (wstats.commits) before the
	// last passive checkpoint that copied the whole WAL: for tests.
	covered int64
}

func newCheckpointer() *checkpointer {
	return &checkpointer{due: make(chan struct{}, 1), done: make(chan struct{})}
}

// committed tells the checkpointer that a commit added to the WAL.
func (c *checkpointer) committed() {
	select {
	case c.due <- struct{}{}:
	default: // a checkpoint is due already
	}
}

// checkpoints runs a passive checkpoint checkpointEvery after a commit,
// and again after the next, until ctx ends. A checkpoint that fails is
// logged and left to the next: the WAL only grows meanwhile.
func (s *Store) checkpoints(ctx context.Context, c *checkpointer) {
	defer close(c.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.due:
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(checkpointEvery):
		}
		if err := s.passiveCheckpoint(ctx, c); err != nil && ctx.Err() == nil {
			s.log.Warn("sqlite: checkpoint failed; the WAL is copied at the next", "err", err)
		}
	}
}

// passiveCheckpoint copies what it can of the WAL into the database file
// without waiting for a reader or the writer.
func (s *Store) passiveCheckpoint(ctx context.Context, c *checkpointer) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	commits := s.wstats.commits.Load()
	start := time.Now()
	var busy, logFrames, done int
	err := s.r.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &logFrames, &done)
	s.wstats.checkpoints.Add(1)
	s.wstats.checkpointTime.Add(int64(time.Since(start)))
	switch {
	case err != nil && !isBusy(err): // busy: another process is checkpointing
		return fmt.Errorf("sqlite: passive checkpoint: %w", err)
	case err == nil && busy == 0 && done == logFrames:
		c.covered = commits
	}
	return nil
}

// checkpoint copies the WAL into the database file and truncates it, so
// that no old frame keeps deleted content. Readers in the middle of a
// snapshot can hold it up: it is retried briefly, then reported. Its
// errors wrap store.ErrNotScrubbed: what it follows was committed.
func (s *Store) checkpoint(ctx context.Context, op string) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.ckpt.mu.Lock()
	defer s.ckpt.mu.Unlock()
	// The writer's busy handler is off (begin waits for other
	// processes); a checkpoint waits in it for readers, up to
	// BusyTimeout, on the writer's one connection.
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("%w: %w", store.ErrNotScrubbed, s.fail(op+": checkpoint", err))
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, fmt.Sprintf(`PRAGMA busy_timeout = %d`, s.busy.Milliseconds())); err != nil {
		return fmt.Errorf("%w: %w", store.ErrNotScrubbed, s.fail(op+": checkpoint", err))
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA busy_timeout = 0`)
	for attempt := 0; ; attempt++ {
		var busy, logFrames, done int
		if err := conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logFrames, &done); err != nil {
			return fmt.Errorf("%w: %w", store.ErrNotScrubbed, s.fail(op+": checkpoint", err))
		}
		if busy == 0 {
			return nil
		}
		if attempt == 20 {
			return fmt.Errorf("sqlite: %s: %w: the WAL could not be truncated: readers kept it busy", op, store.ErrNotScrubbed)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", store.ErrNotScrubbed, s.fail(op+": checkpoint", ctx.Err()))
		case <-time.After(10 * time.Millisecond):
		}
	}
}
