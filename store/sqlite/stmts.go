package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/agentmemory/agentmemory/store"
)

// txn is what a transaction's statements run on: a *sql.Tx, or a write
// transaction (*writeTx) that runs the writer's prepared statements.
type txn interface {
	queryer
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// writeTx is a write transaction on the writer connection. A statement
// whose text is one of writeStatements runs prepared once the store has
// prepared it (writeStmts): SQLite compiles it once per connection
// instead of once per call, which matters because compiling a write to a
// table with FTS5 triggers costs more than running it.
type writeTx struct {
	*sql.Tx
	// ctx is the batch's context, which is never cancelled: every
	// statement runs under it, whatever context its write gives (see
	// ExecContext).
	ctx   context.Context
	stmts *writeStmts
	// bound holds the prepared statements bound to the transaction, by
	// text: a batch runs the same few statements for each of its writes.
	bound map[string]*sql.Stmt
}

// stmt returns query's prepared statement bound to the transaction, or
// nil to run it unprepared.
func (tx *writeTx) stmt(query string) *sql.Stmt {
	if b := tx.bound[query]; b != nil {
		return b
	}
	st := tx.stmts.get(query)
	if st == nil {
		return nil
	}
	b := tx.StmtContext(tx.ctx, st)
	if tx.bound == nil {
		tx.bound = make(map[string]*sql.Stmt)
	}
	tx.bound[query] = b
	return b
}

// ExecContext runs query in the transaction, prepared when it can. It
// runs under the batch's context, not ctx: a write a batch has taken
// runs to its end (its caller waits for the batch's answer whatever its
// context does), so that a cancelled caller never interrupts a statement
// of the transaction its batch-mates share, which would end it and run
// them all again. The driver also starts no goroutine per statement to
// watch a context that cannot end.
func (tx *writeTx) ExecContext(_ context.Context, query string, args ...any) (sql.Result, error) {
	if st := tx.stmt(query); st != nil {
		return st.ExecContext(tx.ctx, args...)
	}
	return tx.Tx.ExecContext(tx.ctx, query, args...)
}

// QueryContext runs query in the transaction, prepared when it can,
// under the batch's context (see ExecContext).
func (tx *writeTx) QueryContext(_ context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := tx.stmt(query); st != nil {
		return st.QueryContext(tx.ctx, args...)
	}
	return tx.Tx.QueryContext(tx.ctx, query, args...)
}

// QueryRowContext runs query in the transaction, prepared when it can,
// under the batch's context (see ExecContext).
func (tx *writeTx) QueryRowContext(_ context.Context, query string, args ...any) *sql.Row {
	if st := tx.stmt(query); st != nil {
		return st.QueryRowContext(tx.ctx, args...)
	}
	return tx.Tx.QueryRowContext(tx.ctx, query, args...)
}

// Statements of the write paths that are not built from a kind's spec.
const (
	readGenSQL   = `SELECT gen FROM generations WHERE user_id = ? AND kind = ?`
	upsertGenSQL = `INSERT INTO generations (user_id, kind, gen) VALUES (?, ?, ?)
ON CONFLICT (user_id, kind) DO UPDATE SET gen = excluded.gen`
	sessionETagSQL   = `SELECT etag FROM session_summaries WHERE user_id = ? AND id = ?`
	deleteSessionSQL = `DELETE FROM session_summaries WHERE user_id = ? AND id = ?`
	deleteTurnsSQL   = `DELETE FROM turns WHERE user_id = ? AND session_id = ?`
	turnSeqSQL       = `SELECT seq FROM turns WHERE user_id = ? AND session_id = ? AND turn_id = ?`
	lastSeqSQL       = `SELECT coalesce(max(seq), 0) FROM turns WHERE user_id = ? AND session_id = ?`
	insertTurnSQL    = `INSERT INTO turns (user_id, session_id, seq, turn_id, doc) VALUES (?, ?, ?, ?, ?)`
	userStateETagSQL = `SELECT etag FROM user_state WHERE user_id = ?`
	upsertUserState  = `INSERT INTO user_state (user_id, etag, doc) VALUES (?, ?, ?)
ON CONFLICT (user_id) DO UPDATE SET etag = excluded.etag, doc = excluded.doc`
)

// writeStatements are the statements prepared on the writer connection:
// those every write runs (generations, terms rows, the tokenizer) and
// those of the small writes that come in numbers (documents, turns, user
// state, records, a session's deletion). The tokenizer's setup comes first: the
// statements after it name its temporary tables.
func writeStatements() []string {
	qs := append([]string{}, tokSetup...)
	qs = append(qs, `SAVEPOINT `+savepoint, `RELEASE `+savepoint, tokClear, tokInstances, readGenSQL, upsertGenSQL,
		sessionETagSQL, sessionUpsert, sessionInsert, sessionReplace, interactionUpsert, insightUpsert, deleteSessionSQL, deleteTurnsSQL,
		turnSeqSQL, lastSeqSQL, insertTurnSQL, userStateETagSQL, upsertUserState,
		recordUpsert, recordInsert, recordReplace, recordETagSQL, deleteRecordSQL)
	for _, kind := range store.Kinds {
		sp, _ := specOf(kind)
		qs = append(qs, readTermsSQL(sp, 1), tokenizeDocsSQL(sp, 1), insertDocTermsSQL(sp), docRowSQL(sp))
	}
	return qs
}

// writeStmts keeps the writer's statements of writeStatements prepared,
// each from the first batch that ran it on: a store opened for a few
// writes compiles a few statements, not every write path's. The writer's
// pool has one connection, which a batch's transaction holds, so a text
// first met in a batch runs unprepared there and is prepared once the
// batch is over (prepareMet, under the write lock). Should database/sql
// replace the connection, each statement is prepared again on the new one
// when first used (withTokenizer creates the tokenizer's tables there
// before any statement that names them).
type writeStmts struct {
	db    *sql.DB
	texts map[string]bool // writeStatements

	mu     sync.Mutex
	m      map[string]*sql.Stmt // prepared, or nil when it failed to
	met    []string             // run unprepared, to prepare
	closed bool
}

// newWriteStmts readies w, the writer's pool of one connection, for
// writeStatements: it creates the tokenizer's temporary tables, which
// some of them name, and prepares none yet.
func newWriteStmts(ctx context.Context, w *sql.DB) (*writeStmts, error) {
	for _, q := range tokSetup {
		if _, err := w.ExecContext(ctx, q); err != nil {
			return nil, fmt.Errorf("tokenizer table: %w", err)
		}
	}
	texts := make(map[string]bool)
	for _, q := range writeStatements() {
		texts[q] = true
	}
	return &writeStmts{db: w, texts: texts, m: make(map[string]*sql.Stmt)}, nil
}

// get returns query prepared, or nil to run it unprepared; a text of
// writeStatements met for the first time is noted for prepareMet.
func (ws *writeStmts) get(query string) *sql.Stmt {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	st, seen := ws.m[query]
	if !seen && ws.texts[query] && !ws.closed {
		ws.m[query] = nil
		ws.met = append(ws.met, query)
	}
	return st
}

// prepareMet prepares the statements met since its last call. It runs
// while no transaction holds the writer's connection; a statement that
// does not prepare goes on running unprepared.
func (ws *writeStmts) prepareMet(ctx context.Context) {
	ws.mu.Lock()
	met := ws.met
	ws.met = nil
	ws.mu.Unlock()
	for _, q := range met {
		st, err := ws.db.PrepareContext(ctx, q)
		ws.mu.Lock()
		switch {
		case err != nil:
		case ws.closed:
			st.Close()
		default:
			ws.m[q] = st
		}
		ws.mu.Unlock()
	}
}

// close closes the prepared statements.
func (ws *writeStmts) close() error {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.closed = true
	var errs []error
	for _, st := range ws.m {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}
