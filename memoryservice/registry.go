package memoryservice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentmemory/agentmemory/store"
)

// The registry keeps the service's records as session documents of its
// partitions (see scopesUser): the record's JSON in the state's
// CumulativeSummary, its kind in the id's prefix, and Status active only
// for update operations not yet finished. Session documents give
// create-only writes and ETag concurrency on every backend without a new
// store call. The JSON is not in Summary, which backends index for full
// text: a record is never searched, and indexing each search's and
// accept's record was most of their cost on SQLite. Records written
// before this have it in Summary, and are read from there.

// getRecord reads registry record k into v, returning its ETag.
func (s *Service) getRecord(ctx context.Context, k recKey, v any) (string, error) {
	doc, err := s.st.GetSession(ctx, k.user, k.id)
	if err != nil {
		return "", err
	}
	return s.getRecordFrom(doc, v)
}

// getRecordFrom decodes a registry document read already.
func (s *Service) getRecordFrom(doc *store.Session, v any) (string, error) {
	text := doc.State.CumulativeSummary
	if text == "" {
		text = doc.Summary // written before records left the text index
	}
	if err := json.Unmarshal([]byte(text), v); err != nil {
		return "", fmt.Errorf("memoryservice: registry record %s: %w", doc.ID, err)
	}
	return doc.ETag, nil
}

// putRecord writes v as registry record k under etag (store.CreateOnly,
// a stored ETag, or "" for unconditional). active marks an unfinished
// update.
func (s *Service) putRecord(ctx context.Context, k recKey, etag string, created time.Time, active bool, v any) error {
	_, err := s.writeRecord(ctx, k, etag, created, active, v)
	return err
}

// writeRecord is putRecord returning the record's new ETag.
func (s *Service) writeRecord(ctx context.Context, k recKey, etag string, created time.Time, active bool, v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	status := store.SessionCompleted
	if active {
		status = store.SessionActive
	}
	doc := &store.Session{ID: k.id, StartTime: created, State: store.SessionState{CumulativeSummary: string(b)}, Status: status,
		ReflectionStatus: store.ReflectionProcessed, UpdatedAt: s.cfg.Now(), ETag: etag}
	if err := s.st.PutSession(ctx, k.user, doc); err != nil {
		return "", err
	}
	return doc.ETag, nil
}

// listRecords returns the registry documents of partition user whose id
// starts with prefix.
func (s *Service) listRecords(ctx context.Context, user, prefix string, f store.SessionFilter) ([]*store.Session, error) {
	docs, err := s.st.ListSessions(ctx, user, f)
	if err != nil {
		return nil, err
	}
	out := docs[:0]
	for _, d := range docs {
		if strings.HasPrefix(d.ID, prefix) {
			out = append(out, d)
		}
	}
	return out, nil
}

// deleteRecord deletes registry record k, if it is there: one document
// (a record has no turns), one point delete on Cosmos DB.
func (s *Service) deleteRecord(ctx context.Context, k recKey) error {
	err := s.st.DeleteDocument(ctx, k.user, store.KindSessionSummary, k.id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}
