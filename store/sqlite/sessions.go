package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/driver"
)

const sessionUpsert = `INSERT INTO session_summaries
	(user_id, id, start_time, status, reflection_status, etag, summary_vector, doc)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (user_id, id) DO UPDATE SET
	start_time = excluded.start_time, status = excluded.status,
	reflection_status = excluded.reflection_status, etag = excluded.etag,
	summary_vector = excluded.summary_vector, doc = excluded.doc`

// sessionInsert writes a new session (CreateOnly), and sessionReplace one
// whose stored ETag is the last argument; each changes no row otherwise.
// The check and the write are one statement.
const (
	sessionInsert = `INSERT INTO session_summaries
	(user_id, id, start_time, status, reflection_status, etag, summary_vector, doc)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (user_id, id) DO NOTHING`
	sessionReplace = `UPDATE session_summaries SET
	start_time = ?3, status = ?4, reflection_status = ?5, etag = ?6, summary_vector = ?7, doc = ?8
WHERE user_id = ?1 AND id = ?2 AND etag = ?9`
)

// sessionConflict explains why a conditional write of doc changed no
// row: the session exists (CreateOnly), is gone, or has another ETag.
func sessionConflict(ctx context.Context, tx *writeTx, userID string, doc *store.Session) error {
	var cur string
	err := tx.QueryRowContext(ctx, sessionETagSQL, userID, doc.ID).Scan(&cur)
	switch {
	case doc.ETag == store.CreateOnly && err == nil:
		return fmt.Errorf("%w: session %s already exists", store.ErrConflict, doc.ID)
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%w: session %s no longer exists (ETag %s)", store.ErrConflict, doc.ID, doc.ETag)
	case err != nil:
		return err
	}
	return fmt.Errorf("%w: session %s changed: ETag %s, stored %s", store.ErrConflict, doc.ID, doc.ETag, cur)
}

// PutSession writes a session document. With an empty doc.ETag it inserts
// or replaces unconditionally; otherwise it succeeds only if the stored
// document still has that ETag, and fails with store.ErrConflict if it has
// another or no longer exists. The check and the write run under the
// database's write lock, so they are atomic across processes too. On
// success doc.ETag holds the new ETag; on failure doc.ETag is unchanged.
func (s *Store) PutSession(ctx context.Context, userID string, doc *store.Session) error {
	if err := s.check(userID); err != nil {
		return err
	}
	if err := s.v.Session(userID, doc); err != nil {
		return err
	}
	b, err := encodeSession(doc)
	if err != nil {
		return fmt.Errorf("%w: session %s: %v", store.ErrInvalid, doc.ID, err)
	}
	etag := rand.Text()
	err = s.write(ctx, "put session", userID, func(tx *writeTx) ([]change, error) {
		args := []any{userID, doc.ID, timeKey(doc.StartTime), string(doc.Status), string(doc.ReflectionStatus), etag,
			encodeVector(doc.SummaryVector), b}
		q := sessionUpsert
		switch doc.ETag {
		case "":
		case store.CreateOnly:
			q = sessionInsert
		default:
			q, args = sessionReplace, append(args, doc.ETag)
		}
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return nil, fmt.Errorf("session %s: %w", doc.ID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, fmt.Errorf("session %s: %w", doc.ID, err)
		} else if n == 0 {
			return nil, sessionConflict(ctx, tx, userID, doc)
		}
		return []change{sessionChange(doc)}, nil
	})
	if err != nil {
		return err
	}
	doc.ETag = etag
	return nil
}

// sessionChange is the cache's view of a written session.
func sessionChange(d *store.Session) change {
	r := &vecRow{id: d.ID, session: d.ID, t: timeKey(d.StartTime)}
	r.setVectors(slices.Clone(d.SummaryVector))
	return change{kind: store.KindSessionSummary, upsert: r, noText: d.Summary == "" && len(d.KeyTopics) == 0}
}

// GetSession returns the session document with its ETag, or
// store.ErrNotFound.
func (s *Store) GetSession(ctx context.Context, userID, sessionID string) (*store.Session, error) {
	if err := s.check(userID); err != nil {
		return nil, err
	}
	if err := store.CheckID("session id", sessionID); err != nil {
		return nil, err
	}
	return readDoc(ctx, s, "get session", "session "+sessionID, querySessions,
		`SELECT id, doc, summary_vector, etag FROM session_summaries WHERE user_id = ? AND id = ?`, userID, sessionID)
}

// ListSessions returns the user's sessions matching f, most recent first
// (by StartTime, then ID, both descending).
func (s *Store) ListSessions(ctx context.Context, userID string, f store.SessionFilter) ([]*store.Session, error) {
	if err := s.check(userID); err != nil {
		return nil, err
	}
	if err := checkLimit("list sessions", f.Limit); err != nil {
		return nil, err
	}
	var w where
	w.add("user_id = ?", userID)
	if f.Status != "" {
		w.add("status = ?", string(f.Status))
	}
	if f.ReflectionStatus != "" {
		w.add("reflection_status = ?", string(f.ReflectionStatus))
	}
	w.timeRange("start_time", f.Since, f.Until)
	q := `SELECT id, doc, summary_vector, etag FROM session_summaries WHERE ` + w.String() +
		` ORDER BY start_time DESC, id DESC` + limitClause(f.Limit)
	return readDocs(ctx, s, "list sessions", querySessions, q, w.args...)
}

func querySessions(ctx context.Context, q queryer, query string, args ...any) ([]*store.Session, error) {
	return queryDocs(ctx, q, "session", 3, func(c []sql.RawBytes) (*store.Session, error) {
		return decodeSession(c[0], c[1], string(c[2]))
	}, query, args...)
}

// DeleteDocument removes one document for good, or fails with
// store.ErrNotFound. Its full-text entry (and an insight's session links)
// go with it.
func (s *Store) DeleteDocument(ctx context.Context, userID string, kind store.Kind, id string) error {
	if err := s.check(userID); err != nil {
		return err
	}
	sp, ok := specOf(kind)
	if !ok {
		return fmt.Errorf("%w: delete: unknown kind %q", store.ErrInvalid, kind)
	}
	if err := store.CheckID(string(kind)+" id", id); err != nil {
		return err
	}
	return s.write(ctx, "delete document", userID, func(tx *writeTx) ([]change, error) {
		res, err := tx.ExecContext(ctx, `DELETE FROM `+sp.table+` WHERE user_id = ? AND id = ?`, userID, id)
		if err != nil {
			return nil, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, fmt.Errorf("%w: %s %s", store.ErrNotFound, kind, id)
		}
		return []change{{kind: kind, remove: id}}, nil
	})
}

// DeleteSession removes the session document and the session's turns in
// one write transaction.
func (s *Store) DeleteSession(ctx context.Context, userID, sessionID string) (int, error) {
	if err := s.check(userID); err != nil {
		return 0, err
	}
	if err := driver.SessionToDelete(sessionID); err != nil {
		return 0, err
	}
	var turns int64
	err := s.write(ctx, "delete session", userID, func(tx *writeTx) ([]change, error) {
		res, err := tx.ExecContext(ctx, deleteSessionSQL, userID, sessionID)
		if err != nil {
			return nil, err
		}
		docs, err := res.RowsAffected()
		if err != nil {
			return nil, err
		}
		res, err = tx.ExecContext(ctx, deleteTurnsSQL, userID, sessionID)
		if err != nil {
			return nil, err
		}
		if turns, err = res.RowsAffected(); err != nil {
			return nil, err
		}
		if docs == 0 && turns == 0 {
			return nil, fmt.Errorf("%w: session %s", store.ErrNotFound, sessionID)
		}
		if docs == 0 {
			return nil, nil // turns are not cached: no generation to bump
		}
		return []change{{kind: store.KindSessionSummary, remove: sessionID}}, nil
	})
	if err != nil {
		return 0, err
	}
	return int(turns), nil
}

// DeleteUser removes every document of the user in every kind, with their
// full-text entries and generation rows, and the user's turns, state and
// records. Deleting a user with no documents succeeds.
func (s *Store) DeleteUser(ctx context.Context, userID string) error {
	if err := s.check(userID); err != nil {
		return err
	}
	err := s.write(ctx, "delete user", userID, func(tx *writeTx) ([]change, error) {
		for _, kind := range store.Kinds {
			sp, _ := specOf(kind)
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+sp.table+` WHERE user_id = ?`, userID); err != nil {
				return nil, fmt.Errorf("%s: %w", kind, err)
			}
		}
		for _, table := range []string{"turns", "user_state", "records"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE user_id = ?`, userID); err != nil {
				return nil, fmt.Errorf("%s: %w", table, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM generations WHERE user_id = ?`, userID); err != nil {
			return nil, err
		}
		// Contentless FTS5 tables keep a deleted row's terms in their
		// segments until a merge rewrites them: rewrite them all now.
		return nil, optimizeFTS(ctx, tx)
	})
	if err != nil {
		return err
	}
	s.cache.dropUser(userID)
	return s.checkpoint(ctx, "delete user")
}
