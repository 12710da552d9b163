package cosmos

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/agentmemory/agentmemory/store"
)

// Turns live in the sessions container, beside their session document and
// in the same partition, one item per turn (the data model Azure's guidance
// for agent memory recommends). docTypeTurn marks them; session documents
// have no doc_type, and every session query keeps to those.
const docTypeTurn = "turn"

// maxAppendAttempts bounds AppendTurn's read-then-create loop when other
// writers keep taking the next number.
const maxAppendAttempts = 32

type wireTurn struct {
	ID      string `json:"id"`
	DocType string `json:"doc_type"`
	*store.Turn
}

// turnItemID is the item id of turn seq of a session: unique per number,
// so that two writers creating the same number conflict (409) instead of
// both succeeding.
func turnItemID(sessionID string, seq int) string {
	sum := sha256.Sum256([]byte(sessionID))
	return "turn-" + hex.EncodeToString(sum[:16]) + "-" + strconv.Itoa(seq)
}

// AppendTurn implements store.Store with two requests when uncontended: a
// query for the turn's id and the numbers from t.Seq on, then a
// create-only write of the next number; a 409 means another writer took
// it, and the loop moves on.
func (s *Store) AppendTurn(ctx context.Context, userID string, t *store.Turn) error {
	if err := s.check(userID); err != nil {
		return err
	}
	if err := s.v.Turn(userID, t); err != nil {
		return err
	}
	from := max(t.Seq, 1)
	for range maxAppendAttempts {
		q := newQuery(userID)
		q.cond("c.doc_type = " + q.param(docTypeTurn))
		q.cond("c.session_id = " + q.param(t.SessionID))
		q.cond("(c.turn_id = " + q.param(t.ID) + " OR c.seq >= " + q.param(from) + ")")
		items, err := s.query(ctx, store.KindSessionSummary, userID, "SELECT c.seq, c.turn_id FROM c"+q.whereClause(), q.params)
		if err != nil {
			return mapErr("append turn "+t.ID, err)
		}
		next := from
		for _, b := range items {
			var row struct {
				Seq    int    `json:"seq"`
				TurnID string `json:"turn_id"`
			}
			if err := json.Unmarshal(b, &row); err != nil {
				return fmt.Errorf("cosmos: append turn %s: decode: %w", t.ID, err)
			}
			if row.TurnID == t.ID {
				t.Seq = row.Seq
				return nil
			}
			next = max(next, row.Seq+1)
		}
		c := *t
		c.Seq = next
		body, err := marshal("turn "+t.ID, wireTurn{ID: turnItemID(t.SessionID, next), DocType: docTypeTurn, Turn: &c})
		if err != nil {
			return err
		}
		_, err = s.create(ctx, store.KindSessionSummary, userID, body)
		if statusOf(err) == http.StatusConflict {
			from = next + 1
			continue
		}
		if err != nil {
			return mapWriteErr("append turn "+t.ID, err)
		}
		t.Seq = next
		return nil
	}
	return fmt.Errorf("%w: append turn %s to session %s: the next number was taken %d times", store.ErrConflict, t.ID, t.SessionID, maxAppendAttempts)
}

// ListTurns implements store.Store.
func (s *Store) ListTurns(ctx context.Context, userID, sessionID string, from int) ([]*store.Turn, error) {
	if err := s.check(userID); err != nil {
		return nil, err
	}
	if err := store.CheckID("session id", sessionID); err != nil {
		return nil, err
	}
	q := newQuery(userID)
	q.cond("c.doc_type = " + q.param(docTypeTurn))
	q.cond("c.session_id = " + q.param(sessionID))
	q.cond("c.seq >= " + q.param(from))
	out, err := queryDocs[store.Turn](ctx, s, store.KindSessionSummary, userID, "list turns", "SELECT * FROM c"+q.whereClause()+" ORDER BY c.seq ASC", q.params)
	if err != nil {
		return nil, err
	}
	for _, t := range out {
		t.Time = t.Time.UTC()
	}
	return out, nil
}

// sessionDocs keeps the session documents of the sessions container (not
// its turns).
func (q *sqlQuery) sessionDocs() { q.cond("NOT IS_DEFINED(c.doc_type)") }
