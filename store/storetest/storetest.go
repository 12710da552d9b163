// Package storetest is the conformance suite every store.Store backend runs,
// after go-cloud's docstore drivertest: one test suite, written against the
// documented contract of package store, so that documents, filters, search
// order, ETags, soft deletes and user isolation behave the same whichever
// backend holds the data.
//
// # Use
//
// A backend's test calls RunConformance with a function that opens a fresh,
// empty store configured for vectors of Dimensions dimensions:
//
//	func TestConformance(t *testing.T) {
//		storetest.RunConformance(t, func(t *testing.T) store.Store {
//			s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "m.db"),
//				sqlite.Config{Dimensions: storetest.Dimensions})
//			require.NoError(t, err)
//			return s
//		})
//	}
//
// # What the suite pins down
//
// Where the doc comments of package store leave room, the suite pins down
// one reading, which every backend must share:
//
//   - A malformed document id (empty, '/', '?', '#', '\', control
//     characters) is ErrInvalid on reads, deletes and supersessions too.
//   - Full text is over words: maximal runs of letters and digits, compared
//     case-insensitively as whole words (no prefix match); every other
//     character of a query is a separator, never syntax.
//   - Every query word counts, with no stopword list ("it", "the", "to" find
//     the documents holding them), and a word held only in a list field
//     (an interaction's topics or entities, a session's key topics) finds
//     its document. A backend that reads a bounded number of full-text
//     candidates keeps the best (RunTextCandidates).
//   - A document without the searched vector is not a vector candidate;
//     the zero MinSimilarity drops negative similarities.
//   - Filters (session, type, category, time) apply before TopK.
//   - When legs are fused, Hit.Score is exactly the RRF sum of 1/(60+rank).
//   - ListSessions and SearchSessions return each session with its ETag.
//   - Records (run when the store implements store.Records, skipped
//     otherwise): a compact JSON body comes back byte for byte; a body
//     that is not JSON in UTF-8 is ErrInvalid; a Prefix is a string
//     prefix of the id, never a pattern or a word.
//
// The suite closes every store it opens. It is deterministic, needs no
// network, and should run in well under two seconds on an embedded backend;
// run it with -race.
package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

// Dimensions is the vector length of the stores the suite opens: open must
// return a store configured to hold vectors of exactly this many dimensions.
const Dimensions = 8

// Opener returns a fresh, empty store configured for Dimensions dimensions.
// It may use t for temporary directories and cleanup; the suite closes the
// store it returns.
type Opener = func(t *testing.T) store.Store

// RunConformance runs the whole conformance suite against the backend that
// open creates, one subtest per part of the contract. Every subtest opens
// its own store.
func RunConformance(t *testing.T, open Opener) {
	t.Helper()
	s := &suite{open: open}
	groups := []struct {
		name string
		fn   func(*testing.T, *suite)
	}{
		{"Interactions", testInteractions},
		{"Insights", testInsights},
		{"Sessions", testSessions},
		{"Delete", testDelete},
		{"List", testList},
		{"ETag", testETag},
		{"Search", testSearch},
		{"TextCandidates", testTextCandidates},
		{"Supersede", testSupersede},
		{"Isolation", testIsolation},
		{"Invalid", testInvalid},
		{"IDs", testIDs},
		{"As", testAs},
		{"Closed", testClosed},
		{"Concurrency", testConcurrency},
		{"Turns", testTurns},
		{"UserState", testUserState},
		{"DeleteSession", testDeleteSession},
		{"DeletionLog", testDeletionLog},
		{"Records", testRecords},
		{"RecordBatch", testRecordBatch},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) { g.fn(t, s) })
	}
}

type suite struct {
	open Opener
}

// fresh opens an empty store and closes it when the test ends.
func (s *suite) fresh(t *testing.T) store.Store {
	t.Helper()
	st := s.open(t)
	require.NotNil(t, st, "open returned a nil store")
	t.Cleanup(func() { require.NoError(t, st.Close(), "Close") })
	return st
}

// Users of the suite. alice and bob are the usual pair; the others make
// sure user ids are compared exactly, as opaque strings.
const (
	alice = "alice"
	bob   = "bob"
)

// t0 is the suite's reference time; every document time is t0 plus whole
// hours, so that ranges are exact.
var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func at(hours int) time.Time { return t0.Add(time.Duration(hours) * time.Hour) }

// vec returns a Dimensions-long vector starting with xs, padded with zeros.
func vec(xs ...float32) []float32 {
	v := make([]float32, Dimensions)
	copy(v, xs)
	return v
}

// unit returns the i-th basis vector.
func unit(i int) []float32 {
	v := make([]float32, Dimensions)
	v[i] = 1
	return v
}

func ptr[T any](v T) *T { return &v }

func ctx(t *testing.T) context.Context { return t.Context() }

// canon returns t as a canonical UTC instant, so that instants compare
// equal with require.Equal whatever zone or representation they came in.
func canon(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return time.Unix(t.Unix(), int64(t.Nanosecond())).UTC()
}

func canonInteraction(d *store.Interaction) *store.Interaction {
	c := *d
	c.Timestamp = canon(c.Timestamp)
	return &c
}

func canonInsight(d *store.Insight) *store.Insight {
	c := *d
	c.CreatedAt = canon(c.CreatedAt)
	c.UpdatedAt = canon(c.UpdatedAt)
	c.SupersededAt = canon(c.SupersededAt)
	return &c
}

func canonSession(d *store.Session) *store.Session {
	c := *d
	c.StartTime = canon(c.StartTime)
	c.EndTime = canon(c.EndTime)
	c.UpdatedAt = canon(c.UpdatedAt)
	c.ETag = ""
	if d.State.Turns != nil {
		c.State.Turns = make([]store.Turn, len(d.State.Turns))
		for i, tr := range d.State.Turns {
			tr.Time = canon(tr.Time)
			c.State.Turns[i] = tr
		}
	}
	return &c
}

// each returns f of every element of xs, in order.
func each[T, U any](xs []T, f func(T) U) []U {
	out := make([]U, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

func interactionIDs(ds []*store.Interaction) []string {
	return each(ds, func(d *store.Interaction) string { return d.ID })
}

func insightIDs(ds []*store.Insight) []string {
	return each(ds, func(d *store.Insight) string { return d.ID })
}

func sessionIDs(ds []*store.Session) []string {
	return each(ds, func(d *store.Session) string { return d.ID })
}

// Small document constructors: only the fields a test cares about.

func interaction(id, session string, ts time.Time, content string) *store.Interaction {
	return &store.Interaction{ID: id, SessionID: session, Timestamp: ts, FirstTurn: 1, LastTurn: 1, Content: content}
}

func insight(id string, created time.Time, text string) *store.Insight {
	return &store.Insight{ID: id, InsightType: store.InsightSession, InsightText: text, CreatedAt: created, UpdatedAt: created}
}

func session(id string, start time.Time, summary string) *store.Session {
	return &store.Session{ID: id, StartTime: start, Summary: summary, UpdatedAt: start}
}
