package cosmos

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

// TestRequestsPerOperation pins how many requests each store operation
// sends, counted by the store's Stats on the test server, for a user with
// a few documents of each kind (every query answers in one page). The
// test server does not model request charges (x-ms-request-charge), so
// requests, not RU, are what it measures; docs/cosmos.md gives the table.
func TestRequestsPerOperation(t *testing.T) {
	s := openLauncher(t, nil)
	ctx := t.Context()
	const user = "alice"
	for i := range 5 {
		require.NoError(t, s.PutInteraction(ctx, user, &store.Interaction{ID: fmt.Sprint("i", i), SessionID: "s1", Timestamp: time.Unix(int64(i), 0),
			FirstTurn: 1, LastTurn: 1, Content: "Roth IRA contribution limits", Summary: "retirement", ContentVector: unitVec(i % 8), SummaryVector: unitVec(0)}))
		require.NoError(t, s.PutInsight(ctx, user, &store.Insight{ID: fmt.Sprint("n", i), InsightType: store.InsightSession,
			InsightText: "Prefers index funds", InsightVector: unitVec(i % 8)}))
	}
	sess := &store.Session{ID: "s1", Summary: "retirement planning", SummaryVector: unitVec(0)}
	require.NoError(t, s.PutSession(ctx, user, sess))

	hybrid := store.SearchRequest{Text: "Roth contribution", Vector: unitVec(1), TopK: 5}
	steps := []struct {
		op   string
		want int64
		run  func(context.Context) error
	}{
		{"PutInteraction (upsert)", 1, func(ctx context.Context) error {
			return s.PutInteraction(ctx, user, &store.Interaction{ID: "new", SessionID: "s1", Content: "x", ContentVector: unitVec(2)})
		}},
		{"GetInteraction (point read)", 1, func(ctx context.Context) error { _, err := s.GetInteraction(ctx, user, "i1"); return err }},
		{"GetSession (point read)", 1, func(ctx context.Context) error {
			got, err := s.GetSession(ctx, user, "s1")
			sess = got
			return err
		}},
		{"PutSession with its ETag (conditional replace)", 1, func(ctx context.Context) error {
			sess.Summary = "retirement planning, revised"
			return s.PutSession(ctx, user, sess)
		}},
		{"ListSessions", 1, func(ctx context.Context) error {
			_, err := s.ListSessions(ctx, user, store.SessionFilter{})
			return err
		}},
		{"SearchInteractions, vector only (two vector fields)", 3, func(ctx context.Context) error {
			_, err := s.SearchInteractions(ctx, user, store.SearchRequest{Vector: unitVec(1), TopK: 5})
			return err
		}},
		{"SearchInteractions, hybrid", 5, func(ctx context.Context) error { _, err := s.SearchInteractions(ctx, user, hybrid); return err }},
		{"SearchInsights, hybrid", 4, func(ctx context.Context) error { _, err := s.SearchInsights(ctx, user, hybrid); return err }},
		{"SearchInsights, text only", 3, func(ctx context.Context) error {
			_, err := s.SearchInsights(ctx, user, store.SearchRequest{Text: "index funds", TopK: 5})
			return err
		}},
		{"SupersedeInsight (read, conditional replace)", 2, func(ctx context.Context) error {
			return s.SupersedeInsight(ctx, user, "n0", store.Supersession{By: "n1", Reason: store.ReasonDuplicate})
		}},
		{"AppendTurn (last number, create-only write)", 2, func(ctx context.Context) error {
			return s.AppendTurn(ctx, user, &store.Turn{ID: "t1", SessionID: "s1", Seq: 1, Time: time.Unix(1, 0),
				Messages: []store.TurnMessage{{ID: "m1", Role: "user", Content: "hi"}}})
		}},
		{"ListTurns", 1, func(ctx context.Context) error { _, err := s.ListTurns(ctx, user, "s1", 0); return err }},
		// Per container: list the ids, delete each, list again (empty).
		{"DeleteUser, 13 documents in 3 containers", 3*2 + 13, func(ctx context.Context) error { return s.DeleteUser(ctx, user) }},
	}
	var table strings.Builder
	for _, st := range steps {
		before := s.Stats().Total().Requests
		require.NoError(t, st.run(ctx), st.op)
		got := s.Stats().Total().Requests - before
		fmt.Fprintf(&table, "| %s | %d |\n", st.op, got)
		assert.Equal(t, st.want, got, st.op)
	}
	t.Logf("requests per operation:\n%s", table.String())
}
