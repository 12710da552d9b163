package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	sqlite3 "modernc.org/sqlite"
	sqlite3lib "modernc.org/sqlite/lib"
)

// begin starts a write transaction (BEGIN IMMEDIATE, which takes the
// file's write lock). While another process holds the lock it tries
// again after 50 µs, doubling the wait up to 2 ms, for up to
// Config.BusyTimeout, then fails with SQLite's busy error. SQLite's own
// busy handler, which the writer leaves at zero, sleeps 1, 2, 5, 10 …
// 100 ms between tries: long beside a group commit of a few
// milliseconds, so that several processes on one file waited for each
// other far longer than they wrote.
func (s *Store) begin(ctx context.Context) (*sql.Tx, error) {
	deadline := time.Now().Add(s.busy)
	wait := 50 * time.Microsecond
	for {
		tx, err := s.w.BeginTx(ctx, nil)
		if err == nil || !isBusy(err) || !time.Now().Before(deadline) {
			return tx, err
		}
		t := time.NewTimer(min(wait, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, 2*time.Millisecond)
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (any extended code).
func isBusy(err error) bool {
	var se *sqlite3.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3lib.SQLITE_BUSY
}
