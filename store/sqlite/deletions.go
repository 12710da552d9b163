package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/driver"
)

// The deletion log is the table deletion_log (schema version 3): one row
// per record, its items as a JSON array. It belongs to no user, so
// DeleteUser leaves it; EraseDeletionNames rewrites a subject's rows in
// place and then checkpoints the WAL, as DeleteUser does, so that with
// secure_delete no old copy of a blanked name stays in the files.

var _ store.DeletionLog = (*Store)(nil)

const deletionColumns = `seq, at, reason, subject, hash, prev, key, user_id, items`

func (s *Store) checkOpen() error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return nil
}

// AppendDeletion implements store.DeletionLog: the check of the number and
// the insert are one write transaction, atomic across processes.
func (s *Store) AppendDeletion(ctx context.Context, rec *store.DeletionRecord) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if err := s.v.DeletionRecord(rec); err != nil {
		return err
	}
	items, err := json.Marshal(nonNilItems(rec.Items))
	if err != nil {
		return fmt.Errorf("%w: deletion record %d: %v", store.ErrInvalid, rec.Seq, err)
	}
	return s.write(ctx, "append deletion", "", func(tx *writeTx) ([]change, error) {
		var last int64
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM deletion_log`).Scan(&last); err != nil {
			return nil, err
		}
		if rec.Seq != last+1 {
			return nil, fmt.Errorf("%w: append deletion %d: the next number is %d", store.ErrConflict, rec.Seq, last+1)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO deletion_log (`+deletionColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			rec.Seq, rec.At.UTC().Format(time.RFC3339Nano), rec.Reason, rec.Subject, rec.Hash, rec.Prev, rec.Key, rec.UserID, string(items))
		return nil, err
	})
}

func nonNilItems(items []store.DeletedItem) []store.DeletedItem {
	if items == nil {
		return []store.DeletedItem{}
	}
	return items
}

// ListDeletions implements store.DeletionLog.
func (s *Store) ListDeletions(ctx context.Context, after int64, limit int) ([]*store.DeletionRecord, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	out := []*store.DeletionRecord{}
	err := s.read(ctx, "list deletions", func(tx *readTx) error {
		var err error
		out, err = queryDeletions(ctx, tx, `SELECT `+deletionColumns+` FROM deletion_log WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
		return err
	})
	return out, err
}

// LastDeletion implements store.DeletionLog.
func (s *Store) LastDeletion(ctx context.Context) (*store.DeletionRecord, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	var rec *store.DeletionRecord
	err := s.read(ctx, "last deletion", func(tx *readTx) error {
		recs, err := queryDeletions(ctx, tx, `SELECT `+deletionColumns+` FROM deletion_log ORDER BY seq DESC LIMIT 1`)
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			return fmt.Errorf("%w: last deletion: the log is empty", store.ErrNotFound)
		}
		rec = recs[0]
		return nil
	})
	return rec, err
}

// EraseDeletionNames implements store.DeletionLog: one write transaction
// rewrites the subject's rows that still hold a name, then the WAL is
// checkpointed and truncated.
func (s *Store) EraseDeletionNames(ctx context.Context, subject string) (int, error) {
	if err := s.checkOpen(); err != nil {
		return 0, err
	}
	if subject == "" {
		return 0, fmt.Errorf("%w: erase deletion names: empty subject", store.ErrInvalid)
	}
	n := 0
	err := s.write(ctx, "erase deletion names", "", func(tx *writeTx) ([]change, error) {
		n = 0 // a run again counts afresh
		recs, err := queryDeletions(ctx, tx, `SELECT `+deletionColumns+` FROM deletion_log WHERE subject = ? ORDER BY seq`, subject)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			if !driver.HasDeletionNames(r) {
				continue
			}
			driver.EraseNames(r)
			items, err := json.Marshal(nonNilItems(r.Items))
			if err != nil {
				return nil, err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE deletion_log SET user_id = '', items = ? WHERE seq = ?`, string(items), r.Seq); err != nil {
				return nil, err
			}
			n++
		}
		return nil, nil
	})
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, nil
	}
	return n, s.checkpoint(ctx, "erase deletion names")
}

func queryDeletions(ctx context.Context, tx queryer, query string, args ...any) ([]*store.DeletionRecord, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*store.DeletionRecord{}
	for rows.Next() {
		r := new(store.DeletionRecord)
		var at, items string
		if err := rows.Scan(&r.Seq, &at, &r.Reason, &r.Subject, &r.Hash, &r.Prev, &r.Key, &r.UserID, &items); err != nil {
			return nil, err
		}
		if r.At, err = time.Parse(time.RFC3339Nano, at); err != nil {
			return nil, fmt.Errorf("decode deletion record %d: time: %w", r.Seq, err)
		}
		if err := json.Unmarshal([]byte(items), &r.Items); err != nil {
			return nil, fmt.Errorf("decode deletion record %d: items: %w", r.Seq, err)
		}
		if len(r.Items) == 0 {
			r.Items = nil
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
