package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/agentmemory/agentmemory/store"
)

const insightUpsert = `INSERT INTO insights
	(user_id, id, insight_type, category, processed, content_hash, superseded, created_at, insight_vector, doc)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (user_id, id) DO UPDATE SET
	insight_type = excluded.insight_type, category = excluded.category, processed = excluded.processed,
	content_hash = excluded.content_hash, superseded = excluded.superseded, created_at = excluded.created_at,
	insight_vector = excluded.insight_vector, doc = excluded.doc`

// PutInsight inserts or replaces the insight with doc.ID, filling a
// missing ContentHash.
func (s *Store) PutInsight(ctx context.Context, userID string, doc *store.Insight) error {
	if err := s.check(userID); err != nil {
		return err
	}
	if err := s.v.Insight(userID, doc); err != nil {
		return err
	}
	b, err := encodeInsight(doc)
	if err != nil {
		return fmt.Errorf("%w: insight %s: %v", store.ErrInvalid, doc.ID, err)
	}
	return s.write(ctx, "put insight", userID, func(tx *writeTx) ([]change, error) {
		if err := upsertInsight(ctx, tx, userID, doc, b); err != nil {
			return nil, err
		}
		return []change{insightChange(doc)}, nil
	})
}

func upsertInsight(ctx context.Context, tx txn, userID string, d *store.Insight, docJSON string) error {
	_, err := tx.ExecContext(ctx, insightUpsert, userID, d.ID, string(d.InsightType), d.Category, boolInt(d.Processed),
		d.ContentHash, boolInt(d.Superseded()), timeKey(d.CreatedAt), encodeVector(d.InsightVector), docJSON)
	if err != nil {
		return fmt.Errorf("insight %s: %w", d.ID, err)
	}
	return nil
}

// insightChange is the cache's view of a written insight: superseded
// insights are not in the cache.
func insightChange(d *store.Insight) change {
	if d.Superseded() {
		return change{kind: store.KindInsight, remove: d.ID}
	}
	r := &vecRow{id: d.ID, sessions: slices.Clone(d.SessionIDs), t: timeKey(d.CreatedAt),
		insightType: d.InsightType, category: d.Category}
	r.setVectors(slices.Clone(d.InsightVector))
	return change{kind: store.KindInsight, upsert: r}
}

// GetInsight returns the insight with the given id, or store.ErrNotFound
// when it does not exist or is superseded.
func (s *Store) GetInsight(ctx context.Context, userID, id string) (*store.Insight, error) {
	if err := s.check(userID); err != nil {
		return nil, err
	}
	if err := store.CheckID("insight id", id); err != nil {
		return nil, err
	}
	var doc *store.Insight
	err := s.read(ctx, "get insight", func(tx *readTx) error {
		var err error
		doc, err = getInsight(ctx, tx, userID, id, false)
		return err
	})
	return doc, err
}

func getInsight(ctx context.Context, q queryer, userID, id string, withSuperseded bool) (*store.Insight, error) {
	var d, v []byte
	var superseded bool
	err := q.QueryRowContext(ctx, `SELECT doc, insight_vector, superseded FROM insights WHERE user_id = ? AND id = ?`,
		userID, id).Scan(&d, &v, &superseded)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && superseded && !withSuperseded) {
		return nil, fmt.Errorf("%w: insight %s", store.ErrNotFound, id)
	}
	if err != nil {
		return nil, err
	}
	doc, err := decodeInsight(d, v)
	if err != nil {
		return nil, fmt.Errorf("decode insight %s: %w", id, err)
	}
	return doc, nil
}

// ListInsights returns the user's insights matching f, newest first (by
// CreatedAt, then ID, both descending).
func (s *Store) ListInsights(ctx context.Context, userID string, f store.InsightFilter) ([]*store.Insight, error) {
	if err := s.check(userID); err != nil {
		return nil, err
	}
	if err := checkLimit("list insights", f.Limit); err != nil {
		return nil, err
	}
	var w where
	w.add("t.user_id = ?", userID)
	if !f.IncludeSuperseded {
		w.add("t.superseded = 0")
	}
	if f.Type != "" {
		w.add("t.insight_type = ?", string(f.Type))
	}
	if f.Category != "" {
		w.add("t.category = ?", f.Category)
	}
	if f.SessionID != "" {
		w.add(`EXISTS (SELECT 1 FROM insight_sessions AS s
	WHERE s.user_id = t.user_id AND s.session_id = ? AND s.insight_rid = t.rid)`, f.SessionID)
	}
	if f.Processed != nil {
		w.add("t.processed = ?", boolInt(*f.Processed))
	}
	w.timeRange("t.created_at", f.Since, f.Until)
	q := `SELECT t.id, t.doc, t.insight_vector FROM insights AS t WHERE ` + w.String() +
		` ORDER BY t.created_at DESC, t.id DESC` + limitClause(f.Limit)
	return readDocs(ctx, s, "list insights", queryInsights, q, w.args...)
}

func queryInsights(ctx context.Context, q queryer, query string, args ...any) ([]*store.Insight, error) {
	return queryDocs(ctx, q, "insight", 2, func(c []sql.RawBytes) (*store.Insight, error) {
		return decodeInsight(c[0], c[1])
	}, query, args...)
}

// FindInsightByHash returns the active insight whose ContentHash is hash
// (the most recent if several), or store.ErrNotFound.
func (s *Store) FindInsightByHash(ctx context.Context, userID, hash string) (*store.Insight, error) {
	if err := s.check(userID); err != nil {
		return nil, err
	}
	if hash == "" {
		return nil, fmt.Errorf("%w: find insight by hash: empty hash", store.ErrInvalid)
	}
	return readDoc(ctx, s, "find insight by hash", "no active insight with hash "+hash, queryInsights,
		`SELECT id, doc, insight_vector FROM insights
WHERE user_id = ? AND content_hash = ? AND superseded = 0
ORDER BY created_at DESC, id DESC LIMIT 1`, userID, hash)
}

// SupersedeInsight soft-deletes the insight with the given id. Repeating
// the same supersession (same By and Reason) succeeds and keeps the first
// SupersededAt; a different one fails with store.ErrConflict.
func (s *Store) SupersedeInsight(ctx context.Context, userID, id string, sup store.Supersession) error {
	if err := s.check(userID); err != nil {
		return err
	}
	sup, err := s.v.Supersession(id, sup)
	if err != nil {
		return err
	}
	return s.write(ctx, "supersede insight", userID, func(tx *writeTx) ([]change, error) {
		doc, err := getInsight(ctx, tx, userID, id, true)
		if err != nil {
			return nil, err
		}
		if doc.Superseded() {
			if doc.SupersededBy == sup.By && doc.SupersedeReason == sup.Reason {
				return nil, nil
			}
			return nil, fmt.Errorf("%w: insight %s is already superseded (%s by %q)", store.ErrConflict, id,
				doc.SupersedeReason, doc.SupersededBy)
		}
		doc.SupersededBy, doc.SupersedeReason, doc.SupersededAt = sup.By, sup.Reason, sup.At
		b, err := encodeInsight(doc)
		if err != nil {
			return nil, fmt.Errorf("encode insight %s: %w", id, err)
		}
		if err := upsertInsight(ctx, tx, userID, doc, b); err != nil {
			return nil, err
		}
		return []change{insightChange(doc)}, nil
	})
}
