package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// maxReadStatements bounds the read statements a store keeps prepared:
// the texts a store builds are few (a query per filter combination, an
// IN list per length), and past the bound a text runs unprepared.
const maxReadStatements = 256

// stmtCache keeps the read statements of a pool of connections prepared
// by text. A statement is compiled once per connection it runs on
// (database/sql prepares a *sql.Stmt on each connection when first used
// there) instead of on every call; compiling was about a tenth of a
// search's CPU.
//
// A text seen for the first time runs unprepared while a goroutine
// prepares it: preparing on the pool takes a connection, and the caller,
// holding one in its transaction, must not wait for another (with every
// connection held that way, none would come).
type stmtCache struct {
	db     *sql.DB
	ctx    context.Context // the preparations'; cancelled by close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	// m holds each text seen: its statement, or nil while it is being
	// prepared or when it did not prepare (a statement naming a temporary
	// table the connection did not have): such a text runs unprepared.
	m      map[string]*sql.Stmt
	closed bool
}

func newStmtCache(db *sql.DB) *stmtCache {
	ctx, cancel := context.WithCancel(context.Background())
	return &stmtCache{db: db, ctx: ctx, cancel: cancel, m: make(map[string]*sql.Stmt)}
}

// get returns query prepared, or nil to run it unprepared.
func (c *stmtCache) get(query string) *sql.Stmt {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, seen := c.m[query]; seen || c.closed || len(c.m) >= maxReadStatements {
		return st
	}
	c.m[query] = nil
	c.wg.Add(1)
	go c.prepare(query)
	return nil
}

// prepare prepares query on the pool and keeps it.
func (c *stmtCache) prepare(query string) {
	defer c.wg.Done()
	st, err := c.db.PrepareContext(c.ctx, query)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		st.Close()
		return
	}
	c.m[query] = st
}

// close ends the preparations and closes the statements.
func (c *stmtCache) close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, st := range c.m {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	clear(c.m)
	return errors.Join(errs...)
}

// readTx is a read transaction whose statements run prepared when the
// store keeps them (stmts; nil runs every statement unprepared).
type readTx struct {
	*sql.Tx
	stmts *stmtCache
}

// ExecContext runs query in the transaction, prepared when it can.
func (tx *readTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := tx.stmts.get(query); st != nil {
		return tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return tx.Tx.ExecContext(ctx, query, args...)
}

// QueryContext runs query in the transaction, prepared when it can.
func (tx *readTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := tx.stmts.get(query); st != nil {
		return tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return tx.Tx.QueryContext(ctx, query, args...)
}

// QueryRowContext runs query in the transaction, prepared when it can.
func (tx *readTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := tx.stmts.get(query); st != nil {
		return tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return tx.Tx.QueryRowContext(ctx, query, args...)
}
