package memoryservice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentmemory/agentmemory/store"
)

// The registry keeps the service's records (store.Record) in partitions of
// their own (see scopesUser): the record's JSON as its body, its kind in
// the id's prefix, and Active only for update operations not yet
// finished. A backend with store.Records of its own keeps them apart from
// the memory (SQLite: a table without full text, vectors or terms);
// elsewhere they are session documents (store.SessionRecords), which is
// also how every backend kept them before (migrateRecords moves them).

// getRecord reads registry record k into v, returning its ETag.
func (s *Service) getRecord(ctx context.Context, k recKey, v any) (string, error) {
	r, err := s.rec.GetRecord(ctx, k.user, k.id)
	if err != nil {
		return "", err
	}
	return decodeRecord(r, v)
}

// decodeRecord decodes a registry record read already into v, returning
// its ETag.
func decodeRecord(r *store.Record, v any) (string, error) {
	if err := json.Unmarshal(r.Body, v); err != nil {
		return "", fmt.Errorf("memoryservice: registry record %s: %w", r.ID, err)
	}
	return r.ETag, nil
}

// putRecord writes v as registry record k under etag (store.CreateOnly,
// a stored ETag, or "" for unconditional). active marks an unfinished
// update; at is the record's time, by which it is listed.
func (s *Service) putRecord(ctx context.Context, k recKey, etag string, at time.Time, active bool, v any) error {
	_, err := s.writeRecord(ctx, k, etag, at, active, v)
	return err
}

// writeRecord is putRecord returning the record's new ETag.
func (s *Service) writeRecord(ctx context.Context, k recKey, etag string, at time.Time, active bool, v any) (string, error) {
	r, err := encodeRecord(k, etag, at, active, v)
	if err != nil {
		return "", err
	}
	if err := s.rec.PutRecord(ctx, k.user, r); err != nil {
		return "", err
	}
	return r.ETag, nil
}

// encodeRecord is v as registry record k, to write under etag.
func encodeRecord(k recKey, etag string, at time.Time, active bool, v any) (*store.Record, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &store.Record{ID: k.id, Time: at, Active: active, Body: b, ETag: etag}, nil
}

// listRecords returns the registry records of partition user matching f.
func (s *Service) listRecords(ctx context.Context, user string, f store.RecordFilter) ([]*store.Record, error) {
	return s.rec.ListRecords(ctx, user, f)
}

// deleteRecord deletes registry record k, if it is there.
func (s *Service) deleteRecord(ctx context.Context, k recKey) error {
	err := s.rec.DeleteRecord(ctx, k.user, k.id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}
