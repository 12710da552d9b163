package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentmemory/agentmemory/store"
)

var _ store.Records = (*Store)(nil)

// The statements of a record's write. recordInsert writes a new record
// (CreateOnly) and recordReplace one whose stored ETag is the last
// argument; each changes no row otherwise, so that the check and the
// write are one statement. A record has no full text, terms or vectors:
// its write touches its row and the time index only.
const (
	recordUpsert = `INSERT INTO records (user_id, id, time, active, etag, body) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (user_id, id) DO UPDATE SET
	time = excluded.time, active = excluded.active, etag = excluded.etag, body = excluded.body`
	recordInsert = `INSERT INTO records (user_id, id, time, active, etag, body) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (user_id, id) DO NOTHING`
	recordReplace = `UPDATE records SET time = ?3, active = ?4, etag = ?5, body = ?6
WHERE user_id = ?1 AND id = ?2 AND etag = ?7`
	recordETagSQL   = `SELECT etag FROM records WHERE user_id = ? AND id = ?`
	deleteRecordSQL = `DELETE FROM records WHERE user_id = ? AND id = ?`
)

// recordColumns are the columns queryRecords reads, in its order.
const recordColumns = `id, time, active, etag, body`

// PutRecord implements store.Records. The ETag check and the write are
// one statement under the database's write lock, atomic across
// processes; the write bumps no generation (no cache holds records). On
// failure r.ETag is unchanged.
func (s *Store) PutRecord(ctx context.Context, userID string, r *store.Record) error {
	if err := s.check(userID); err != nil {
		return err
	}
	if err := s.v.Record(r); err != nil {
		return err
	}
	q, args, etag := recordWrite(userID, r)
	err := s.write(ctx, "put record", userID, func(tx *writeTx) ([]change, error) {
		return nil, putRecordRow(ctx, tx, userID, r, q, args)
	})
	if err != nil {
		return err
	}
	r.ETag = etag
	return nil
}

// putRecordRow runs q, the statement of recordWrite for r, in tx; one
// that changes no row is r's conflict.
func putRecordRow(ctx context.Context, tx *writeTx, userID string, r *store.Record, q string, args []any) error {
	res, err := tx.ExecContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("record %s: %w", r.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("record %s: %w", r.ID, err)
	} else if n == 0 {
		return recordConflict(ctx, tx, userID, r)
	}
	return nil
}

// checkRecordRow fails with store.ErrConflict unless the record v.ID of
// userID has ETag v.ETag.
func checkRecordRow(ctx context.Context, tx *writeTx, userID string, v store.RecordVersion) error {
	var cur string
	err := tx.QueryRowContext(ctx, recordETagSQL, userID, v.ID).Scan(&cur)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.CheckVersion(v, nil)
	case err != nil:
		return fmt.Errorf("record %s: read its ETag: %w", v.ID, err)
	}
	return store.CheckVersion(v, &store.Record{ID: v.ID, ETag: cur})
}

// recordConflict explains why a conditional write of r changed no row:
// the record exists (CreateOnly), is gone, or has another ETag.
func recordConflict(ctx context.Context, tx *writeTx, userID string, r *store.Record) error {
	var cur string
	err := tx.QueryRowContext(ctx, recordETagSQL, userID, r.ID).Scan(&cur)
	switch {
	case r.ETag == store.CreateOnly && err == nil:
		return fmt.Errorf("%w: record %s already exists", store.ErrConflict, r.ID)
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%w: record %s no longer exists (ETag %s)", store.ErrConflict, r.ID, r.ETag)
	case err != nil:
		return fmt.Errorf("record %s: read its ETag: %w", r.ID, err)
	}
	return fmt.Errorf("%w: record %s changed: ETag %s, stored %s", store.ErrConflict, r.ID, r.ETag, cur)
}

// GetRecord implements store.Records.
func (s *Store) GetRecord(ctx context.Context, userID, id string) (*store.Record, error) {
	if err := s.check(userID); err != nil {
		return nil, err
	}
	if err := store.CheckID("record id", id); err != nil {
		return nil, err
	}
	return readDoc(ctx, s, "get record", "record "+id, queryRecords,
		`SELECT `+recordColumns+` FROM records WHERE user_id = ? AND id = ?`, userID, id)
}

// ListRecords implements store.Records. A prefix is a range of the
// primary key (id >= prefix AND id < the prefix's successor), never a
// pattern.
func (s *Store) ListRecords(ctx context.Context, userID string, f store.RecordFilter) ([]*store.Record, error) {
	if err := s.check(userID); err != nil {
		return nil, err
	}
	if err := s.v.RecordFilter(f); err != nil {
		return nil, err
	}
	var w where
	w.add("user_id = ?", userID)
	if f.Prefix != "" {
		w.add("id >= ?", f.Prefix)
		if end, ok := prefixEnd(f.Prefix); ok {
			w.add("id < ?", end)
		}
	}
	switch f.State {
	case store.RecordActive:
		w.add("active = 1")
	case store.RecordFinished:
		w.add("active = 0")
	}
	w.timeRange("time", time.Time{}, f.Until)
	q := `SELECT ` + recordColumns + ` FROM records WHERE ` + w.String() +
		` ORDER BY time DESC, id DESC` + limitClause(f.Limit)
	return readDocs(ctx, s, "list records", queryRecords, q, w.args...)
}

// prefixEnd returns the least string greater than every string that
// starts with p, in SQLite's byte order (BINARY collation of UTF-8), and
// false when there is none (p is all 0xff bytes, which no UTF-8 holds).
// The result need not be valid UTF-8: it is only compared.
func prefixEnd(p string) (string, bool) {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1]), true
		}
	}
	return "", false
}

// queryRecords runs query, which selects recordColumns, and returns the
// records in row order.
func queryRecords(ctx context.Context, q queryer, query string, args ...any) ([]*store.Record, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*store.Record
	for rows.Next() {
		r := new(store.Record)
		var key string
		if err := rows.Scan(&r.ID, &key, &r.Active, &r.ETag, &r.Body); err != nil {
			return nil, err
		}
		if r.Time, err = time.Parse(timeLayout, key); err != nil {
			return nil, fmt.Errorf("decode record %s: time: %w", r.ID, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// DeleteRecord implements store.Records.
func (s *Store) DeleteRecord(ctx context.Context, userID, id string) error {
	if err := s.check(userID); err != nil {
		return err
	}
	if err := store.CheckID("record id", id); err != nil {
		return err
	}
	return s.write(ctx, "delete record", userID, func(tx *writeTx) ([]change, error) {
		res, err := tx.ExecContext(ctx, deleteRecordSQL, userID, id)
		if err != nil {
			return nil, fmt.Errorf("record %s: %w", id, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return nil, fmt.Errorf("record %s: %w", id, err)
		}
		if n == 0 {
			return nil, fmt.Errorf("%w: record %s", store.ErrNotFound, id)
		}
		return nil, nil
	})
}

var _ store.RecordBatch = (*Store)(nil)

// WriteRecords implements store.RecordBatch: the writes run in order in
// one savepoint of a group commit, so either all of them are made or
// none is.
func (s *Store) WriteRecords(ctx context.Context, ws []store.RecordWrite) error {
	type prepared struct {
		q    string
		args []any
		etag string
		seq  int // an Append's
	}
	ps := make([]prepared, len(ws))
	for i, w := range ws {
		if err := s.check(w.UserID); err != nil {
			return &store.RecordWriteError{Index: i, Err: err}
		}
		switch {
		case w.Put != nil:
			if err := s.v.Record(w.Put); err != nil {
				return &store.RecordWriteError{Index: i, Err: err}
			}
			ps[i].q, ps[i].args, ps[i].etag = recordWrite(w.UserID, w.Put)
		case w.Append != nil:
			if err := s.v.Turn(w.UserID, w.Append); err != nil {
				return &store.RecordWriteError{Index: i, Err: err}
			}
		case w.Check != nil:
			if err := store.CheckID("record id", w.Check.ID); err != nil {
				return &store.RecordWriteError{Index: i, Err: err}
			}
		default:
			if err := store.CheckID("record id", w.Delete); err != nil {
				return &store.RecordWriteError{Index: i, Err: err}
			}
			ps[i] = prepared{q: deleteRecordSQL, args: []any{w.UserID, w.Delete}}
		}
	}
	if len(ws) == 0 {
		return nil
	}
	err := s.write(ctx, "write records", ws[0].UserID, func(tx *writeTx) ([]change, error) {
		for i, p := range ps {
			var err error
			switch w := ws[i]; {
			case w.Put != nil:
				err = putRecordRow(ctx, tx, w.UserID, w.Put, p.q, p.args)
			case w.Append != nil:
				ps[i].seq, err = appendTurnRow(ctx, tx, w.UserID, w.Append)
			case w.Check != nil:
				err = checkRecordRow(ctx, tx, w.UserID, *w.Check)
			default:
				_, err = tx.ExecContext(ctx, p.q, p.args...)
			}
			if err != nil {
				return nil, &store.RecordWriteError{Index: i, Err: err}
			}
		}
		return nil, nil
	})
	if err != nil {
		return err
	}
	for i, w := range ws {
		switch {
		case w.Put != nil:
			w.Put.ETag = ps[i].etag
		case w.Append != nil:
			w.Append.Seq = ps[i].seq
		}
	}
	return nil
}

// recordWrite returns the statement that writes r in partition userID
// under its ETag's rules, its arguments, and the ETag it gives r.
func recordWrite(userID string, r *store.Record) (string, []any, string) {
	active := 0
	if r.Active {
		active = 1
	}
	etag := rand.Text()
	args := []any{userID, r.ID, timeKey(r.Time), active, etag, string(r.Body)}
	switch r.ETag {
	case "":
		return recordUpsert, args, etag
	case store.CreateOnly:
		return recordInsert, args, etag
	}
	return recordReplace, append(args, r.ETag), etag
}
