package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/agentmemory/agentmemory/store"
)

// Store returns st with each of its calls counted by operation
// (snake_case: "get_session", "append_turn", …): its duration, and its
// failure by error class. The result implements what st does beyond
// store.Store and callers look for by type assertion — store.DeletionLog,
// Scrub (store/sqlite), VectorDimensions (store/sqlite, store/cosmos) —
// and no more; store.RecordsOf finds st's records, counted, through its
// Records method (records.go). As and Close reach st. A nil Recorder or a nil st returns
// st.
func (r *Recorder) Store(st store.Store) store.Store {
	if r == nil || st == nil {
		return st
	}
	c := &countedStore{r: r, st: st}
	c.rec = countRecords(c, st)
	lg, hasLog := st.(store.DeletionLog)
	sc, hasScrub := st.(scrubber)
	dm, hasDims := st.(dimensioner)
	l, s, d := countedLog{c, lg}, countedScrub{c, sc}, countedDims{c, dm}
	switch {
	case hasLog && hasScrub && hasDims:
		return struct {
			*countedStore
			countedLog
			countedScrub
			countedDims
		}{c, l, s, d}
	case hasLog && hasScrub:
		return struct {
			*countedStore
			countedLog
			countedScrub
		}{c, l, s}
	case hasLog && hasDims:
		return struct {
			*countedStore
			countedLog
			countedDims
		}{c, l, d}
	case hasScrub && hasDims:
		return struct {
			*countedStore
			countedScrub
			countedDims
		}{c, s, d}
	case hasLog:
		return struct {
			*countedStore
			countedLog
		}{c, l}
	case hasScrub:
		return struct {
			*countedStore
			countedScrub
		}{c, s}
	case hasDims:
		return struct {
			*countedStore
			countedDims
		}{c, d}
	}
	return c
}

// scrubber is a store that rewrites what deletions leave in its files
// (store/sqlite); package provider looks for it after a forget.
type scrubber interface {
	Scrub(ctx context.Context) error
}

// dimensioner is a store that tells the vector lengths it holds
// (store/sqlite, store/cosmos); agentmemory check looks for it.
type dimensioner interface {
	VectorDimensions(ctx context.Context) ([]int, error)
}

// storeCall counts one store call of op that took d and failed with err
// (nil when it did not).
func (r *Recorder) storeCall(op string, d time.Duration, err error) {
	r.storeSeconds.WithLabelValues(op).Observe(d.Seconds())
	if err != nil {
		r.storeErrors.WithLabelValues(op, errorClass(err)).Inc()
	}
}

// errorClass names the kind of a store error for the error label: one of
// the store's sentinels, a cancelled or expired context, or other (a
// failure of the backend itself).
func errorClass(err error) string {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "not_found"
	case errors.Is(err, store.ErrConflict):
		return "conflict"
	case errors.Is(err, store.ErrInvalid):
		return "invalid"
	case errors.Is(err, store.ErrClosed):
		return "closed"
	case errors.Is(err, store.ErrNotScrubbed):
		return "not_scrubbed"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "canceled"
	}
	return "other"
}

// observe runs one store call of op and counts it.
func observe[T any](c *countedStore, op string, call func() (T, error)) (T, error) {
	start := time.Now()
	v, err := call()
	c.r.storeCall(op, time.Since(start), err)
	return v, err
}

// observeErr is observe for a call that returns only an error.
func observeErr(c *countedStore, op string, call func() error) error {
	_, err := observe(c, op, func() (struct{}, error) { return struct{}{}, call() })
	return err
}

// countedStore is a store.Store whose calls a Recorder counts.
type countedStore struct {
	r   *Recorder
	st  store.Store
	rec store.Records // st's, counted (records.go)
}

// Unwrap returns the store counted.
func (c *countedStore) Unwrap() store.Store { return c.st }

// As reaches the store counted.
func (c *countedStore) As(i any) bool { return c.st.As(i) }

// Close closes the store counted.
func (c *countedStore) Close() error { return c.st.Close() }

func (c *countedStore) PutInteraction(ctx context.Context, userID string, doc *store.Interaction) error {
	return observeErr(c, "put_interaction", func() error { return c.st.PutInteraction(ctx, userID, doc) })
}

func (c *countedStore) GetInteraction(ctx context.Context, userID, id string) (*store.Interaction, error) {
	return observe(c, "get_interaction", func() (*store.Interaction, error) { return c.st.GetInteraction(ctx, userID, id) })
}

func (c *countedStore) ListInteractions(ctx context.Context, userID string, f store.InteractionFilter) ([]*store.Interaction, error) {
	return observe(c, "list_interactions", func() ([]*store.Interaction, error) { return c.st.ListInteractions(ctx, userID, f) })
}

func (c *countedStore) SearchInteractions(ctx context.Context, userID string, q store.SearchRequest) ([]store.Hit[*store.Interaction], error) {
	return observe(c, "search_interactions", func() ([]store.Hit[*store.Interaction], error) { return c.st.SearchInteractions(ctx, userID, q) })
}

func (c *countedStore) PutInsight(ctx context.Context, userID string, doc *store.Insight) error {
	return observeErr(c, "put_insight", func() error { return c.st.PutInsight(ctx, userID, doc) })
}

func (c *countedStore) GetInsight(ctx context.Context, userID, id string) (*store.Insight, error) {
	return observe(c, "get_insight", func() (*store.Insight, error) { return c.st.GetInsight(ctx, userID, id) })
}

func (c *countedStore) ListInsights(ctx context.Context, userID string, f store.InsightFilter) ([]*store.Insight, error) {
	return observe(c, "list_insights", func() ([]*store.Insight, error) { return c.st.ListInsights(ctx, userID, f) })
}

func (c *countedStore) SearchInsights(ctx context.Context, userID string, q store.SearchRequest) ([]store.Hit[*store.Insight], error) {
	return observe(c, "search_insights", func() ([]store.Hit[*store.Insight], error) { return c.st.SearchInsights(ctx, userID, q) })
}

func (c *countedStore) FindInsightByHash(ctx context.Context, userID, hash string) (*store.Insight, error) {
	return observe(c, "find_insight_by_hash", func() (*store.Insight, error) { return c.st.FindInsightByHash(ctx, userID, hash) })
}

func (c *countedStore) SupersedeInsight(ctx context.Context, userID, id string, s store.Supersession) error {
	return observeErr(c, "supersede_insight", func() error { return c.st.SupersedeInsight(ctx, userID, id, s) })
}

func (c *countedStore) PutSession(ctx context.Context, userID string, doc *store.Session) error {
	return observeErr(c, "put_session", func() error { return c.st.PutSession(ctx, userID, doc) })
}

func (c *countedStore) GetSession(ctx context.Context, userID, sessionID string) (*store.Session, error) {
	return observe(c, "get_session", func() (*store.Session, error) { return c.st.GetSession(ctx, userID, sessionID) })
}

func (c *countedStore) ListSessions(ctx context.Context, userID string, f store.SessionFilter) ([]*store.Session, error) {
	return observe(c, "list_sessions", func() ([]*store.Session, error) { return c.st.ListSessions(ctx, userID, f) })
}

func (c *countedStore) SearchSessions(ctx context.Context, userID string, q store.SearchRequest) ([]store.Hit[*store.Session], error) {
	return observe(c, "search_sessions", func() ([]store.Hit[*store.Session], error) { return c.st.SearchSessions(ctx, userID, q) })
}

func (c *countedStore) AppendTurn(ctx context.Context, userID string, t *store.Turn) error {
	return observeErr(c, "append_turn", func() error { return c.st.AppendTurn(ctx, userID, t) })
}

func (c *countedStore) ListTurns(ctx context.Context, userID, sessionID string, from int) ([]*store.Turn, error) {
	return observe(c, "list_turns", func() ([]*store.Turn, error) { return c.st.ListTurns(ctx, userID, sessionID, from) })
}

func (c *countedStore) GetUserState(ctx context.Context, userID string) (*store.UserState, error) {
	return observe(c, "get_user_state", func() (*store.UserState, error) { return c.st.GetUserState(ctx, userID) })
}

func (c *countedStore) PutUserState(ctx context.Context, userID string, doc *store.UserState) error {
	return observeErr(c, "put_user_state", func() error { return c.st.PutUserState(ctx, userID, doc) })
}

func (c *countedStore) DeleteDocument(ctx context.Context, userID string, kind store.Kind, id string) error {
	return observeErr(c, "delete_document", func() error { return c.st.DeleteDocument(ctx, userID, kind, id) })
}

func (c *countedStore) DeleteSession(ctx context.Context, userID, sessionID string) (int, error) {
	return observe(c, "delete_session", func() (int, error) { return c.st.DeleteSession(ctx, userID, sessionID) })
}

func (c *countedStore) DeleteUser(ctx context.Context, userID string) error {
	return observeErr(c, "delete_user", func() error { return c.st.DeleteUser(ctx, userID) })
}

// countedLog counts the calls of a store's deletion log.
type countedLog struct {
	c  *countedStore
	lg store.DeletionLog
}

func (l countedLog) AppendDeletion(ctx context.Context, rec *store.DeletionRecord) error {
	return observeErr(l.c, "append_deletion", func() error { return l.lg.AppendDeletion(ctx, rec) })
}

func (l countedLog) ListDeletions(ctx context.Context, after int64, limit int) ([]*store.DeletionRecord, error) {
	return observe(l.c, "list_deletions", func() ([]*store.DeletionRecord, error) { return l.lg.ListDeletions(ctx, after, limit) })
}

func (l countedLog) LastDeletion(ctx context.Context) (*store.DeletionRecord, error) {
	return observe(l.c, "last_deletion", func() (*store.DeletionRecord, error) { return l.lg.LastDeletion(ctx) })
}

func (l countedLog) EraseDeletionNames(ctx context.Context, subject string) (int, error) {
	return observe(l.c, "erase_deletion_names", func() (int, error) { return l.lg.EraseDeletionNames(ctx, subject) })
}

// countedScrub counts a store's scrubs.
type countedScrub struct {
	c  *countedStore
	sc scrubber
}

func (s countedScrub) Scrub(ctx context.Context) error {
	return observeErr(s.c, "scrub", func() error { return s.sc.Scrub(ctx) })
}

// countedDims counts a store's reads of its vector lengths.
type countedDims struct {
	c  *countedStore
	dm dimensioner
}

func (d countedDims) VectorDimensions(ctx context.Context) ([]int, error) {
	return observe(d.c, "vector_dimensions", func() ([]int, error) { return d.dm.VectorDimensions(ctx) })
}
