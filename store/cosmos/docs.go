package cosmos

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/driver"
)

// upsert writes a document unconditionally and returns its new ETag.
func (s *Store) upsert(ctx context.Context, kind store.Kind, userID string, body []byte) (string, error) {
	start := time.Now()
	resp, err := s.container(kind).UpsertItem(ctx, pk(userID), body, nil)
	s.observe(ctx, OpUpsert, kind, resp.RequestCharge, start, err)
	return string(resp.ETag), err
}

// create writes a document that must not exist yet (409 otherwise).
func (s *Store) create(ctx context.Context, kind store.Kind, userID string, body []byte) (string, error) {
	start := time.Now()
	resp, err := s.container(kind).CreateItem(ctx, pk(userID), body, nil)
	s.observe(ctx, OpCreate, kind, resp.RequestCharge, start, err)
	return string(resp.ETag), err
}

// replace writes a document only if its stored ETag is etag.
func (s *Store) replace(ctx context.Context, kind store.Kind, userID, id string, body []byte, etag string) (string, error) {
	start := time.Now()
	e := azcore.ETag(etag)
	resp, err := s.container(kind).ReplaceItem(ctx, pk(userID), id, body, &azcosmos.ItemOptions{IfMatchEtag: &e})
	s.observe(ctx, OpReplace, kind, resp.RequestCharge, start, err)
	return string(resp.ETag), err
}

// read is a point read: the body and the ETag.
func (s *Store) read(ctx context.Context, kind store.Kind, userID, id string) ([]byte, string, error) {
	start := time.Now()
	resp, err := s.container(kind).ReadItem(ctx, pk(userID), id, nil)
	s.observe(ctx, OpRead, kind, resp.RequestCharge, start, err)
	return resp.Value, string(resp.ETag), err
}

func (s *Store) del(ctx context.Context, kind store.Kind, userID, id string) error {
	start := time.Now()
	resp, err := s.container(kind).DeleteItem(ctx, pk(userID), id, nil)
	s.observe(ctx, OpDelete, kind, resp.RequestCharge, start, err)
	return err
}

// putDoc validates doc with valid, encodes it and upserts it into kind's
// container; what names the call in errors.
func putDoc[T any](ctx context.Context, s *Store, kind store.Kind, userID string, doc *T, valid func(string, *T) error, encode func(*T) ([]byte, error), what func() string) error {
	if err := s.check(userID); err != nil {
		return err
	}
	if err := valid(userID, doc); err != nil {
		return err
	}
	body, err := encode(doc)
	if err != nil {
		return err
	}
	_, err = s.upsert(ctx, kind, userID, body)
	if err != nil {
		return mapWriteErr(what(), err)
	}
	return nil
}

// readDoc is a point read of the document id of kind, named so in
// errors: the document and its ETag.
func readDoc[T any](ctx context.Context, s *Store, kind store.Kind, name, userID, id string) (*T, string, error) {
	b, etag, err := s.read(ctx, kind, userID, id)
	if err != nil {
		return nil, "", mapErr("get "+name+" "+id, err)
	}
	d, err := decode[T](b)
	return d, etag, err
}

// PutInteraction inserts or replaces the interaction with doc.ID.
func (s *Store) PutInteraction(ctx context.Context, userID string, doc *store.Interaction) error {
	return putDoc(ctx, s, store.KindInteraction, userID, doc, s.v.Interaction, encodeInteraction,
		func() string { return "put interaction " + doc.ID })
}

// GetInteraction returns the interaction with the given id.
func (s *Store) GetInteraction(ctx context.Context, userID, id string) (*store.Interaction, error) {
	if err := s.check(userID); err != nil {
		return nil, err
	}
	if err := store.CheckID("interaction id", id); err != nil {
		return nil, err
	}
	d, _, err := readDoc[store.Interaction](ctx, s, store.KindInteraction, "interaction", userID, id)
	return d, err
}

// ListInteractions returns the user's interactions matching f, oldest first.
func (s *Store) ListInteractions(ctx context.Context, userID string, f store.InteractionFilter) ([]*store.Interaction, error) {
	if err := s.check(userID); err != nil {
		return nil, err
	}
	if f.Limit < 0 {
		return nil, fmt.Errorf("%w: list interactions: negative limit %d", store.ErrInvalid, f.Limit)
	}
	q := newQuery(userID)
	if f.SessionID != "" {
		q.cond("c.session_id = " + q.param(f.SessionID))
	}
	if f.MetadataPending {
		q.cond("c.metadata_pending = true")
	}
	q.timeRange("c.timestamp", f.Since, f.Until)
	sql := "SELECT * FROM c" + q.whereClause() + " ORDER BY c.timestamp ASC, c.first_turn ASC, c.id ASC"
	if f.Limit > 0 {
		sql = "SELECT TOP " + q.param(f.Limit) + " * FROM c" + q.whereClause() + " ORDER BY c.timestamp DESC, c.first_turn DESC, c.id DESC"
	}
	out, err := queryDocs[store.Interaction](ctx, s, store.KindInteraction, userID, "list interactions", sql, q.params)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b *store.Interaction) int {
		if c := a.Timestamp.Compare(b.Timestamp); c != 0 {
			return c
		}
		if a.FirstTurn != b.FirstTurn {
			return a.FirstTurn - b.FirstTurn
		}
		return compareStrings(a.ID, b.ID)
	})
	return out, nil
}

// PutInsight inserts or replaces the insight with doc.ID.
func (s *Store) PutInsight(ctx context.Context, userID string, doc *store.Insight) error {
	return putDoc(ctx, s, store.KindInsight, userID, doc, s.v.Insight, encodeInsight,
		func() string { return "put insight " + doc.ID })
}

// GetInsight returns the active insight with the given id.
func (s *Store) GetInsight(ctx context.Context, userID, id string) (*store.Insight, error) {
	if err := s.check(userID); err != nil {
		return nil, err
	}
	if err := store.CheckID("insight id", id); err != nil {
		return nil, err
	}
	d, _, err := s.readInsight(ctx, userID, id)
	if err != nil {
		return nil, err
	}
	if d.Superseded() {
		return nil, fmt.Errorf("%w: insight %q is superseded (%s)", store.ErrNotFound, id, d.SupersedeReason)
	}
	return d, nil
}

func (s *Store) readInsight(ctx context.Context, userID, id string) (*store.Insight, string, error) {
	return readDoc[store.Insight](ctx, s, store.KindInsight, "insight", userID, id)
}

// ListInsights returns the user's insights matching f, newest first.
func (s *Store) ListInsights(ctx context.Context, userID string, f store.InsightFilter) ([]*store.Insight, error) {
	if err := s.check(userID); err != nil {
		return nil, err
	}
	if f.Limit < 0 {
		return nil, fmt.Errorf("%w: list insights: negative limit %d", store.ErrInvalid, f.Limit)
	}
	q := newQuery(userID)
	if !f.IncludeSuperseded {
		q.active()
	}
	if f.Type != "" {
		q.cond("c.insight_type = " + q.param(string(f.Type)))
	}
	if f.Category != "" {
		q.cond("c.category = " + q.param(f.Category))
	}
	if f.SessionID != "" {
		q.cond("ARRAY_CONTAINS(c.session_ids, " + q.param(f.SessionID) + ")")
	}
	if f.Processed != nil {
		q.cond("c.processed = " + q.param(*f.Processed))
	}
	q.timeRange("c.created_at", f.Since, f.Until)
	top := ""
	if f.Limit > 0 {
		top = "TOP " + q.param(f.Limit) + " "
	}
	sql := "SELECT " + top + "* FROM c" + q.whereClause() + " ORDER BY c.created_at DESC, c.id DESC"
	out, err := queryDocs[store.Insight](ctx, s, store.KindInsight, userID, "list insights", sql, q.params)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, newestInsightFirst)
	return out, nil
}

func newestInsightFirst(a, b *store.Insight) int {
	if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
		return c
	}
	return compareStrings(b.ID, a.ID)
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// FindInsightByHash returns the most recent active insight with the hash.
func (s *Store) FindInsightByHash(ctx context.Context, userID, hash string) (*store.Insight, error) {
	if err := s.check(userID); err != nil {
		return nil, err
	}
	q := newQuery(userID)
	q.active()
	q.cond("c.content_hash = " + q.param(hash))
	sql := "SELECT TOP 1 * FROM c" + q.whereClause() + " ORDER BY c.created_at DESC, c.id DESC"
	out, err := queryDocs[store.Insight](ctx, s, store.KindInsight, userID, "find insight by hash", sql, q.params)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no active insight with content hash %q", store.ErrNotFound, hash)
	}
	return out[0], nil
}

// maxSupersedeAttempts bounds the read-check-replace loop of
// SupersedeInsight under concurrent writers.
const maxSupersedeAttempts = 8

// SupersedeInsight soft-deletes an insight: a point read, then a
// conditional replace on the read's ETag, retried if another writer got
// in between.
func (s *Store) SupersedeInsight(ctx context.Context, userID, id string, sup store.Supersession) error {
	if err := s.check(userID); err != nil {
		return err
	}
	sup, err := s.v.Supersession(id, sup)
	if err != nil {
		return err
	}
	for range maxSupersedeAttempts {
		d, etag, err := s.readInsight(ctx, userID, id)
		if err != nil {
			return fmt.Errorf("supersede insight %q: %w", id, err)
		}
		if d.Superseded() {
			if d.SupersededBy == sup.By && d.SupersedeReason == sup.Reason {
				return nil
			}
			return fmt.Errorf("%w: insight %q already superseded (%s by %q)", store.ErrConflict, id, d.SupersedeReason, d.SupersededBy)
		}
		d.SupersededBy, d.SupersedeReason, d.SupersededAt = sup.By, sup.Reason, sup.At.UTC()
		body, err := encodeInsight(d)
		if err != nil {
			return err
		}
		_, err = s.replace(ctx, store.KindInsight, userID, id, body, etag)
		switch statusOf(err) {
		case 0:
			if err != nil {
				return fmt.Errorf("cosmos: supersede insight %q: %w", id, err)
			}
			return nil
		case http.StatusPreconditionFailed:
			continue // changed since the read: decide again
		default:
			return mapErr("supersede insight "+id, err)
		}
	}
	return fmt.Errorf("%w: supersede insight %q: still changing after %d attempts", store.ErrConflict, id, maxSupersedeAttempts)
}

// PutSession writes a session document, conditionally on doc.ETag when set.
func (s *Store) PutSession(ctx context.Context, userID string, doc *store.Session) error {
	if err := s.check(userID); err != nil {
		return err
	}
	if err := s.v.Session(userID, doc); err != nil {
		return err
	}
	body, err := encodeSession(doc)
	if err != nil {
		return err
	}
	etag, err := s.putETag(ctx, userID, doc.ID, body, doc.ETag, fmt.Sprintf("put session %q", doc.ID))
	if err != nil {
		return err
	}
	doc.ETag = etag
	return nil
}

// putETag writes body, the document id of the sessions container, as
// etag asks: an upsert when it is empty, a create-only write for
// store.CreateOnly, else a replace conditional on it, which never
// recreates a missing document. It returns the new ETag;
// what names the call in errors.
func (s *Store) putETag(ctx context.Context, userID, id string, body []byte, etag, what string) (string, error) {
	var err error
	switch etag {
	case "":
		etag, err = s.upsert(ctx, store.KindSessionSummary, userID, body)
	case store.CreateOnly:
		etag, err = s.create(ctx, store.KindSessionSummary, userID, body)
		if statusOf(err) == http.StatusConflict {
			return "", fmt.Errorf("%w: %s: already exists: %w", store.ErrConflict, what, err)
		}
	default:
		etag, err = s.replace(ctx, store.KindSessionSummary, userID, id, body, etag)
		switch statusOf(err) {
		case http.StatusNotFound:
			return "", fmt.Errorf("%w: %s: no longer exists: %w", store.ErrConflict, what, err)
		case http.StatusPreconditionFailed:
			return "", fmt.Errorf("%w: %s: stale ETag: %w", store.ErrConflict, what, err)
		}
	}
	if err != nil {
		return "", mapWriteErr(what, err)
	}
	return etag, nil
}

// GetSession returns the session document with its ETag.
func (s *Store) GetSession(ctx context.Context, userID, sessionID string) (*store.Session, error) {
	if err := s.check(userID); err != nil {
		return nil, err
	}
	if err := store.CheckID("session id", sessionID); err != nil {
		return nil, err
	}
	b, etag, err := s.read(ctx, store.KindSessionSummary, userID, sessionID)
	if err != nil {
		return nil, mapErr("get session "+sessionID, err)
	}
	var kind struct {
		DocType string `json:"doc_type"`
	}
	if err := json.Unmarshal(b, &kind); err == nil && kind.DocType != "" {
		// A turn or the user state, which share the container.
		return nil, fmt.Errorf("%w: session %s", store.ErrNotFound, sessionID)
	}
	d, err := decode[store.Session](b)
	if err != nil {
		return nil, err
	}
	if etag != "" {
		d.ETag = etag
	}
	return d, nil
}

// ListSessions returns the user's sessions matching f, most recent first.
func (s *Store) ListSessions(ctx context.Context, userID string, f store.SessionFilter) ([]*store.Session, error) {
	if err := s.check(userID); err != nil {
		return nil, err
	}
	if f.Limit < 0 {
		return nil, fmt.Errorf("%w: list sessions: negative limit %d", store.ErrInvalid, f.Limit)
	}
	q := newQuery(userID)
	q.sessionDocs()
	if f.Status != "" {
		q.cond("c.status = " + q.param(string(f.Status)))
	}
	if f.ReflectionStatus != "" {
		q.cond("c.reflection_status = " + q.param(string(f.ReflectionStatus)))
	}
	q.timeRange("c.start_time", f.Since, f.Until)
	top := ""
	if f.Limit > 0 {
		top = "TOP " + q.param(f.Limit) + " "
	}
	sql := "SELECT " + top + "* FROM c" + q.whereClause() + " ORDER BY c.start_time DESC, c.id DESC"
	out, err := queryDocs[store.Session](ctx, s, store.KindSessionSummary, userID, "list sessions", sql, q.params)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b *store.Session) int {
		if c := b.StartTime.Compare(a.StartTime); c != 0 {
			return c
		}
		return compareStrings(b.ID, a.ID)
	})
	return out, nil
}

// DeleteDocument removes one document for good.
func (s *Store) DeleteDocument(ctx context.Context, userID string, kind store.Kind, id string) error {
	if err := s.check(userID); err != nil {
		return err
	}
	if !kind.Valid() {
		return fmt.Errorf("%w: delete: unknown kind %q", store.ErrInvalid, kind)
	}
	if err := store.CheckID(string(kind)+" id", id); err != nil {
		return err
	}
	return mapErr("delete "+string(kind)+" "+id, s.del(ctx, kind, userID, id))
}

// DeleteSession removes the session document and the session's turn
// items, which share its partition: one query for their ids, then one
// delete each, a few at a time. The user state (store.UserStateID) is refused as a session
// id, and the query matches only the session document (no doc_type) and
// the turns of the session, so nothing else of the partition goes.
func (s *Store) DeleteSession(ctx context.Context, userID, sessionID string) (int, error) {
	if err := s.check(userID); err != nil {
		return 0, err
	}
	if err := driver.SessionToDelete(sessionID); err != nil {
		return 0, err
	}
	q := newQuery(userID)
	q.cond("((c.id = " + q.param(sessionID) + " AND NOT IS_DEFINED(c.doc_type)) OR (c.doc_type = " +
		q.param(docTypeTurn) + " AND c.session_id = " + q.param(sessionID) + "))")
	items, err := s.query(ctx, store.KindSessionSummary, userID, "SELECT c.id, c.doc_type FROM c"+q.whereClause(), q.params)
	if err != nil {
		return 0, mapErr("delete session "+sessionID, err)
	}
	if len(items) == 0 {
		return 0, fmt.Errorf("%w: session %s", store.ErrNotFound, sessionID)
	}
	turns := 0
	ids := make([]string, len(items))
	for i, b := range items {
		var row struct {
			ID      string `json:"id"`
			DocType string `json:"doc_type"`
		}
		if err := json.Unmarshal(b, &row); err != nil {
			return 0, fmt.Errorf("cosmos: delete session %s: decode: %w", sessionID, err)
		}
		ids[i] = row.ID
		if row.DocType == docTypeTurn {
			turns++
		}
	}
	if err := s.deleteEach(ctx, store.KindSessionSummary, userID, "delete session "+sessionID, ids); err != nil {
		return 0, err
	}
	return turns, nil
}

// maxDeletePasses bounds DeleteUser's list-and-delete passes per container
// when documents keep arriving while it runs.
const maxDeletePasses = 4

// DeleteUser removes every document of the user in every container: it
// lists the ids in the user's partition and deletes them, a few at a time,
// until a listing comes back empty.
func (s *Store) DeleteUser(ctx context.Context, userID string) error {
	if err := s.check(userID); err != nil {
		return err
	}
	for _, kind := range store.Kinds {
		for pass := 0; ; pass++ {
			n, err := s.deleteAll(ctx, kind, userID)
			if err != nil {
				return err
			}
			if n == 0 {
				break
			}
			if pass == maxDeletePasses {
				return fmt.Errorf("cosmos: delete user: %s still has documents after %d passes", kind, maxDeletePasses)
			}
		}
	}
	return nil
}

// deleteAll deletes the documents of one listing of the user's partition
// and returns how many it listed.
func (s *Store) deleteAll(ctx context.Context, kind store.Kind, userID string) (int, error) {
	q := newQuery(userID)
	sql := "SELECT VALUE c.id FROM c" + q.whereClause()
	items, err := s.query(ctx, kind, userID, sql, q.params)
	if err != nil {
		return 0, mapErr("delete user: list "+string(kind), err)
	}
	ids := make([]string, len(items))
	for i, b := range items {
		if err := json.Unmarshal(b, &ids[i]); err != nil {
			return 0, fmt.Errorf("cosmos: delete user: id in %s: %w", string(kind), err)
		}
	}
	return len(items), s.deleteEach(ctx, kind, userID, "delete user", ids)
}

// deleteEach deletes the documents with the given ids from the user's
// partition, DefaultDeleteConcurrency at a time; one already gone (404) is
// no error.
func (s *Store) deleteEach(ctx context.Context, kind store.Kind, userID, what string, ids []string) error {
	work := make(chan string)
	errs := make(chan error, DefaultDeleteConcurrency)
	var wg sync.WaitGroup
	for range min(DefaultDeleteConcurrency, len(ids)) {
		wg.Go(func() {
			for id := range work {
				if err := s.del(ctx, kind, userID, id); err != nil && statusOf(err) != http.StatusNotFound {
					errs <- mapErr(what+": delete "+string(kind)+" "+id, err)
					return
				}
			}
		})
	}
	var firstErr error
send:
	for _, id := range ids {
		select {
		case work <- id:
		case err := <-errs:
			firstErr = err
			break send
		case <-ctx.Done():
			firstErr = ctx.Err()
			break send
		}
	}
	close(work)
	wg.Wait()
	close(errs)
	if firstErr == nil {
		firstErr = <-errs
	}
	return firstErr
}

// mapWriteErr maps a write's error: a 400 on a document we validated is the
// service refusing its content (say, a vector the policy rejects), which is
// bad input.
func mapWriteErr(what string, err error) error {
	if statusOf(err) == http.StatusBadRequest {
		return fmt.Errorf("%w: %s: %w", store.ErrInvalid, what, err)
	}
	return mapErr(what, err)
}
