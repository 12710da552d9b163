package cosmos

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/driver"
)

// The deletion log lives in the sessions container under its own partition
// key value, store.DeletionLogPartition, which no user id can take (the
// store refuses it as one): one item per record, marked docTypeDeletion,
// with the id deletionItemID(seq). A user's calls never reach the
// partition, and DeleteUser, which deletes only the user's partition,
// leaves the log.
//
// The items carry the partition key in user_id like every other item, so
// the clear user id of a record travels as name_user_id.
const docTypeDeletion = "deletion"

// deletionItemID is the item id of record seq: one id per number, so two
// appenders of the same number conflict (409) and only one lands.
func deletionItemID(seq int64) string { return fmt.Sprintf("deletion-%020d", seq) }

type wireDeletion struct {
	ID         string              `json:"id"`
	UserID     string              `json:"user_id"` // the partition key: store.DeletionLogPartition
	DocType    string              `json:"doc_type"`
	Seq        int64               `json:"seq"`
	At         time.Time           `json:"at"`
	Reason     string              `json:"reason"`
	Subject    string              `json:"subject"`
	Items      []store.DeletedItem `json:"items,omitempty"`
	Prev       string              `json:"prev"`
	Hash       string              `json:"hash"`
	Key        string              `json:"key,omitempty"`
	NameUserID string              `json:"name_user_id,omitempty"`
	ETag       string              `json:"_etag,omitempty"` // read only: never sent
}

func toWireDeletion(r *store.DeletionRecord) wireDeletion {
	return wireDeletion{
		ID: deletionItemID(r.Seq), UserID: store.DeletionLogPartition, DocType: docTypeDeletion,
		Seq: r.Seq, At: r.At.UTC(), Reason: r.Reason, Subject: r.Subject, Items: r.Items,
		Prev: r.Prev, Hash: r.Hash, Key: r.Key, NameUserID: r.UserID,
	}
}

func (w *wireDeletion) record() *store.DeletionRecord {
	return &store.DeletionRecord{
		Seq: w.Seq, At: w.At.UTC(), Reason: w.Reason, Subject: w.Subject, Items: w.Items,
		Prev: w.Prev, Hash: w.Hash, Key: w.Key, UserID: w.NameUserID,
	}
}

var _ store.DeletionLog = (*Store)(nil)

func (s *Store) checkOpen() error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return nil
}

// logQuery starts a query of the log's records.
func logQuery() *sqlQuery {
	q := newQuery(store.DeletionLogPartition)
	q.cond("c.doc_type = " + q.param(docTypeDeletion))
	return q
}

func (s *Store) queryDeletions(ctx context.Context, what, sql string, q *sqlQuery) ([]*wireDeletion, error) {
	return queryDocs[wireDeletion](ctx, s, store.KindSessionSummary, store.DeletionLogPartition, what, sql, q.params)
}

// lastDeletion returns the record with the highest number, or nil.
func (s *Store) lastDeletion(ctx context.Context, what string) (*wireDeletion, error) {
	q := logQuery()
	recs, err := s.queryDeletions(ctx, what, "SELECT TOP 1 * FROM c"+q.whereClause()+" ORDER BY c.seq DESC", q)
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	return recs[0], nil
}

// AppendDeletion implements store.DeletionLog with a query for the last
// number and a create-only write of the record's item: a number other than
// the last plus one is refused, and a create that finds the number taken
// (409) is store.ErrConflict.
func (s *Store) AppendDeletion(ctx context.Context, rec *store.DeletionRecord) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if err := s.v.DeletionRecord(rec); err != nil {
		return err
	}
	what := fmt.Sprintf("append deletion %d", rec.Seq)
	last, err := s.lastDeletion(ctx, what)
	if err != nil {
		return err
	}
	var lastSeq int64
	if last != nil {
		lastSeq = last.Seq
	}
	if rec.Seq != lastSeq+1 {
		return fmt.Errorf("%w: %s: the next number is %d", store.ErrConflict, what, lastSeq+1)
	}
	body, err := marshal("deletion record", toWireDeletion(rec))
	if err != nil {
		return err
	}
	_, err = s.create(ctx, store.KindSessionSummary, store.DeletionLogPartition, body)
	if statusOf(err) == http.StatusConflict {
		return fmt.Errorf("%w: %s: the number was taken: %w", store.ErrConflict, what, err)
	}
	return mapWriteErr(what, err)
}

// ListDeletions implements store.DeletionLog with one query.
func (s *Store) ListDeletions(ctx context.Context, after int64, limit int) ([]*store.DeletionRecord, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	q := logQuery()
	q.cond("c.seq > " + q.param(after))
	top := ""
	if limit > 0 {
		top = "TOP " + q.param(limit) + " "
	}
	recs, err := s.queryDeletions(ctx, "list deletions", "SELECT "+top+"* FROM c"+q.whereClause()+" ORDER BY c.seq ASC", q)
	if err != nil {
		return nil, err
	}
	out := make([]*store.DeletionRecord, len(recs))
	for i, w := range recs {
		out[i] = w.record()
	}
	return out, nil
}

// LastDeletion implements store.DeletionLog with one query.
func (s *Store) LastDeletion(ctx context.Context) (*store.DeletionRecord, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	last, err := s.lastDeletion(ctx, "last deletion")
	if err != nil {
		return nil, err
	}
	if last == nil {
		return nil, fmt.Errorf("%w: last deletion: the log is empty", store.ErrNotFound)
	}
	return last.record(), nil
}

// EraseDeletionNames implements store.DeletionLog: a query for the
// subject's records, then a replace of each that still holds a name,
// guarded by the ETag it was read with (a record that changed meanwhile
// was being erased by another call, and is left to it).
func (s *Store) EraseDeletionNames(ctx context.Context, subject string) (int, error) {
	if err := s.checkOpen(); err != nil {
		return 0, err
	}
	if subject == "" {
		return 0, fmt.Errorf("%w: erase deletion names: empty subject", store.ErrInvalid)
	}
	q := logQuery()
	q.cond("c.subject = " + q.param(subject))
	recs, err := s.queryDeletions(ctx, "erase deletion names", "SELECT * FROM c"+q.whereClause(), q)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, w := range recs {
		r := w.record()
		if !driver.HasDeletionNames(r) {
			continue
		}
		driver.EraseNames(r)
		body, err := marshal("deletion record", toWireDeletion(r))
		if err != nil {
			return n, err
		}
		_, err = s.replace(ctx, store.KindSessionSummary, store.DeletionLogPartition, w.ID, body, w.ETag)
		if statusOf(err) == http.StatusPreconditionFailed {
			continue
		}
		if err != nil {
			return n, mapErr("erase deletion names", err)
		}
		n++
	}
	return n, nil
}
