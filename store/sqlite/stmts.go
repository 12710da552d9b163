package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentmemory/agentmemory/store"
)

// txn is what a transaction's statements run on: a *sql.Tx, or a write
// transaction (*writeTx) that runs the writer's prepared statements.
type txn interface {
	queryer
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// writeTx is a write transaction on the writer connection. A statement
// whose text is one the store prepared at Open (writeStatements) runs
// prepared: SQLite compiles it once per connection instead of once per
// call, which matters because compiling a write to a table with FTS5
// triggers costs more than running it.
type writeTx struct {
	*sql.Tx
	prepared map[string]*sql.Stmt
}

// ExecContext runs query in the transaction, prepared when it can.
func (tx *writeTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := tx.prepared[query]; st != nil {
		return tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return tx.Tx.ExecContext(ctx, query, args...)
}

// QueryContext runs query in the transaction, prepared when it can.
func (tx *writeTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := tx.prepared[query]; st != nil {
		return tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return tx.Tx.QueryContext(ctx, query, args...)
}

// QueryRowContext runs query in the transaction, prepared when it can.
func (tx *writeTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := tx.prepared[query]; st != nil {
		return tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return tx.Tx.QueryRowContext(ctx, query, args...)
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

// prepareWrites prepares writeStatements on w, the writer's pool of one
// connection, creating the tokenizer's temporary tables on it first.
// Should database/sql replace the connection, each statement is prepared
// again on the new one when first used (withTokenizer creates the tables
// there before any statement that names them).
func prepareWrites(ctx context.Context, w *sql.DB) (map[string]*sql.Stmt, error) {
	for _, q := range tokSetup {
		if _, err := w.ExecContext(ctx, q); err != nil {
			return nil, fmt.Errorf("tokenizer table: %w", err)
		}
	}
	m := make(map[string]*sql.Stmt)
	for _, q := range writeStatements() {
		if m[q] != nil {
			continue
		}
		st, err := w.PrepareContext(ctx, q)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("prepare %q: %w", q, err), closeStatements(m))
		}
		m[q] = st
	}
	return m, nil
}

// closeStatements closes the prepared statements of m.
func closeStatements(m map[string]*sql.Stmt) error {
	var errs []error
	for _, st := range m {
		errs = append(errs, st.Close())
	}
	return errors.Join(errs...)
}
