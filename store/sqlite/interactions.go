package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/agentmemory/agentmemory/store"
)

const interactionUpsert = `INSERT INTO interactions
	(user_id, id, session_id, ts, first_turn, metadata_pending, content_vector, summary_vector, doc)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (user_id, id) DO UPDATE SET
	session_id = excluded.session_id, ts = excluded.ts, first_turn = excluded.first_turn,
	metadata_pending = excluded.metadata_pending, content_vector = excluded.content_vector,
	summary_vector = excluded.summary_vector, doc = excluded.doc`

// PutInteraction inserts or replaces the interaction with doc.ID.
func (s *Store) PutInteraction(ctx context.Context, userID string, doc *store.Interaction) error {
	return s.putInteractions(ctx, userID, []*store.Interaction{doc})
}

// putInteractions writes docs in one transaction: all or none.
func (s *Store) putInteractions(ctx context.Context, userID string, docs []*store.Interaction) error {
	if err := s.check(userID); err != nil {
		return err
	}
	type enc struct {
		doc  *store.Interaction
		json string
	}
	encs := make([]enc, len(docs))
	for i, d := range docs {
		if err := s.v.Interaction(userID, d); err != nil {
			return err
		}
		b, err := encodeInteraction(d)
		if err != nil {
			return fmt.Errorf("%w: interaction %s: %v", store.ErrInvalid, d.ID, err)
		}
		encs[i] = enc{d, b}
	}
	return s.write(ctx, "put interaction", userID, func(tx *writeTx) ([]change, error) {
		changes := make([]change, 0, len(encs))
		for _, e := range encs {
			d := e.doc
			if _, err := tx.ExecContext(ctx, interactionUpsert, userID, d.ID, d.SessionID, timeKey(d.Timestamp), d.FirstTurn,
				boolInt(d.MetadataPending), encodeVector(d.ContentVector), encodeVector(d.SummaryVector), e.json); err != nil {
				return nil, fmt.Errorf("interaction %s: %w", d.ID, err)
			}
			changes = append(changes, interactionChange(d))
		}
		return changes, nil
	})
}

// interactionChange is the cache's view of a written interaction; the
// vectors are copied, as the caller keeps doc.
func interactionChange(d *store.Interaction) change {
	r := &vecRow{id: d.ID, session: d.SessionID, t: timeKey(d.Timestamp)}
	r.setVectors(slices.Clone(d.ContentVector), slices.Clone(d.SummaryVector))
	return change{kind: store.KindInteraction, upsert: r}
}

// GetInteraction returns the interaction with the given id, or
// store.ErrNotFound.
func (s *Store) GetInteraction(ctx context.Context, userID, id string) (*store.Interaction, error) {
	if err := s.check(userID); err != nil {
		return nil, err
	}
	if err := store.CheckID("interaction id", id); err != nil {
		return nil, err
	}
	return readDoc(ctx, s, "get interaction", "interaction "+id, queryInteractions,
		`SELECT id, doc, content_vector, summary_vector FROM interactions WHERE user_id = ? AND id = ?`, userID, id)
}

// ListInteractions returns the user's interactions matching f, oldest first
// (by Timestamp, then FirstTurn, then ID); with f.Limit, the most recent
// f.Limit of them.
func (s *Store) ListInteractions(ctx context.Context, userID string, f store.InteractionFilter) ([]*store.Interaction, error) {
	if err := s.check(userID); err != nil {
		return nil, err
	}
	if err := checkLimit("list interactions", f.Limit); err != nil {
		return nil, err
	}
	var w where
	w.add("user_id = ?", userID)
	if f.SessionID != "" {
		w.add("session_id = ?", f.SessionID)
	}
	if f.MetadataPending {
		w.add("metadata_pending = 1")
	}
	w.timeRange("ts", f.Since, f.Until)
	q := `SELECT id, doc, content_vector, summary_vector FROM interactions WHERE ` + w.String() +
		` ORDER BY ts, first_turn, id`
	if f.Limit > 0 {
		q = `SELECT id, doc, content_vector, summary_vector FROM (
	SELECT id, ts, first_turn, doc, content_vector, summary_vector FROM interactions WHERE ` + w.String() +
			` ORDER BY ts DESC, first_turn DESC, id DESC` + limitClause(f.Limit) + `
) ORDER BY ts, first_turn, id`
	}
	return readDocs(ctx, s, "list interactions", queryInteractions, q, w.args...)
}

func queryInteractions(ctx context.Context, q queryer, query string, args ...any) ([]*store.Interaction, error) {
	return queryDocs(ctx, q, "interaction", 3, func(c []sql.RawBytes) (*store.Interaction, error) {
		return decodeInteraction(c[0], c[1], c[2])
	}, query, args...)
}
