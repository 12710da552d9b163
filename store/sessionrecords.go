package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// RecordsOf returns the Records of st: those a wrapper of a store hands
// on through a method Records() Records (package metrics' counted store
// has one), st's own where the backend has them, and otherwise
// SessionRecords over st.
func RecordsOf(st Store) Records {
	if w, ok := st.(interface{ Records() Records }); ok {
		return w.Records()
	}
	if r, ok := st.(Records); ok {
		return r
	}
	return SessionRecords(st)
}

// SessionRecords keeps records as session documents of their partitions,
// for a backend without Records of its own: a record is the session with
// its id, StartTime its Time, status active or completed as it is Active,
// and its body in the state's CumulativeSummary (never indexed for full
// text). Documents written this way before Records existed, with the body
// in Summary, are read too. It costs a session document's write per
// record, and a listing with a Prefix reads the partition's other
// sessions too.
func SessionRecords(st interface {
	Sessions
	Deleter
}) Records {
	return sessionRecords{st}
}

type sessionRecords struct {
	st interface {
		Sessions
		Deleter
	}
}

// PutRecord implements Records.
func (s sessionRecords) PutRecord(ctx context.Context, userID string, r *Record) error {
	if !json.Valid(r.Body) {
		return fmt.Errorf("%w: record %s: body is not valid JSON", ErrInvalid, r.ID)
	}
	status := SessionCompleted
	if r.Active {
		status = SessionActive
	}
	doc := &Session{ID: r.ID, StartTime: r.Time, State: SessionState{CumulativeSummary: string(r.Body)}, Status: status,
		ReflectionStatus: ReflectionProcessed, UpdatedAt: time.Now().UTC(), ETag: r.ETag}
	if err := s.st.PutSession(ctx, userID, doc); err != nil {
		return err
	}
	r.ETag = doc.ETag
	return nil
}

// GetRecord implements Records.
func (s sessionRecords) GetRecord(ctx context.Context, userID, id string) (*Record, error) {
	doc, err := s.st.GetSession(ctx, userID, id)
	if err != nil {
		return nil, err
	}
	return sessionRecord(doc), nil
}

// ListRecords implements Records. A Limit with a Prefix is applied after
// the prefix, so the partition is read whole.
func (s sessionRecords) ListRecords(ctx context.Context, userID string, f RecordFilter) ([]*Record, error) {
	sf := SessionFilter{Until: f.Until}
	switch f.State {
	case "":
	case RecordActive:
		sf.Status = SessionActive
	case RecordFinished:
		sf.Status = SessionCompleted
	default:
		return nil, fmt.Errorf("%w: record state %q", ErrInvalid, f.State)
	}
	if f.Prefix == "" {
		sf.Limit = f.Limit
	}
	docs, err := s.st.ListSessions(ctx, userID, sf)
	if err != nil {
		return nil, err
	}
	out := make([]*Record, 0, len(docs))
	for _, d := range docs {
		if !strings.HasPrefix(d.ID, f.Prefix) {
			continue
		}
		if f.Limit > 0 && len(out) == f.Limit {
			break
		}
		out = append(out, sessionRecord(d))
	}
	return out, nil
}

// DeleteRecord implements Records: one document (a record has no
// turns), a point delete where the backend has one.
func (s sessionRecords) DeleteRecord(ctx context.Context, userID, id string) error {
	return s.st.DeleteDocument(ctx, userID, KindSessionSummary, id)
}

// sessionRecord is the record a session document keeps.
func sessionRecord(d *Session) *Record {
	body := d.State.CumulativeSummary
	if body == "" {
		body = d.Summary // written before records left the text index
	}
	return &Record{ID: d.ID, Time: d.StartTime, Active: d.Status == SessionActive, Body: []byte(body), ETag: d.ETag}
}
