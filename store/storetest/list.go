package storetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

func testList(t *testing.T, s *suite) {
	t.Run("Interactions", func(t *testing.T) {
		st := s.fresh(t)
		mk := func(id, sess string, hours, first int, pending bool) *store.Interaction {
			d := interaction(id, sess, at(hours), "content of "+id)
			d.FirstTurn, d.LastTurn = first, first+1
			d.MetadataPending = pending
			return d
		}
		// Put out of order: the store orders by Timestamp, then FirstTurn.
		for _, d := range []*store.Interaction{
			mk("i4", "s1", 3, 7, true),
			mk("i2", "s1", 2, 5, false),
			mk("j1", "s2", 1, 1, true),
			mk("i3", "s1", 2, 3, false), // same timestamp as i2, earlier turns: i3 comes first
			mk("i1", "s1", 0, 1, false),
		} {
			require.NoError(t, st.PutInteraction(ctx(t), alice, d))
		}
		cases := []struct {
			name string
			f    store.InteractionFilter
			want []string
		}{
			{"all oldest first", store.InteractionFilter{}, []string{"i1", "j1", "i3", "i2", "i4"}},
			{"one session", store.InteractionFilter{SessionID: "s1"}, []string{"i1", "i3", "i2", "i4"}},
			{"limit keeps the most recent", store.InteractionFilter{SessionID: "s1", Limit: 2}, []string{"i2", "i4"}},
			{"limit over all", store.InteractionFilter{Limit: 3}, []string{"i3", "i2", "i4"}},
			{"limit above count", store.InteractionFilter{Limit: 50}, []string{"i1", "j1", "i3", "i2", "i4"}},
			{"metadata pending", store.InteractionFilter{MetadataPending: true}, []string{"j1", "i4"}},
			{"pending in session", store.InteractionFilter{SessionID: "s2", MetadataPending: true}, []string{"j1"}},
			{"since inclusive, until exclusive", store.InteractionFilter{Since: at(1), Until: at(3)}, []string{"j1", "i3", "i2"}},
			{"since only", store.InteractionFilter{Since: at(2)}, []string{"i3", "i2", "i4"}},
			{"until only", store.InteractionFilter{Until: at(1)}, []string{"i1"}},
			{"range and limit", store.InteractionFilter{Since: at(1), Until: at(3), Limit: 1}, []string{"i2"}},
			{"unknown session", store.InteractionFilter{SessionID: "s9"}, []string{}},
		}
		for _, c := range cases {
			got, err := st.ListInteractions(ctx(t), alice, c.f)
			require.NoError(t, err, c.name)
			assert.Equal(t, c.want, interactionIDs(got), c.name)
		}
		// A non-UTC bound is the same instant.
		got, err := st.ListInteractions(ctx(t), alice, store.InteractionFilter{Since: at(2).In(zone)})
		require.NoError(t, err)
		assert.Equal(t, []string{"i3", "i2", "i4"}, interactionIDs(got))
	})
	t.Run("Sessions", func(t *testing.T) {
		st := s.fresh(t)
		mk := func(id string, hours int, status store.SessionStatus, refl store.ReflectionStatus) *store.Session {
			d := session(id, at(hours), "summary of "+id)
			d.Status, d.ReflectionStatus = status, refl
			return d
		}
		for _, d := range []*store.Session{
			mk("s2", 1, store.SessionCompleted, store.ReflectionProcessed),
			mk("s4", 3, store.SessionCompleted, store.ReflectionNoInsight),
			mk("s1", 0, "", ""), // defaults: active, pending
			mk("s3", 2, store.SessionActive, store.ReflectionPending),
		} {
			require.NoError(t, st.PutSession(ctx(t), alice, d))
		}
		cases := []struct {
			name string
			f    store.SessionFilter
			want []string
		}{
			{"all newest first", store.SessionFilter{}, []string{"s4", "s3", "s2", "s1"}},
			{"limit keeps the most recent", store.SessionFilter{Limit: 2}, []string{"s4", "s3"}},
			{"completed", store.SessionFilter{Status: store.SessionCompleted}, []string{"s4", "s2"}},
			{"active", store.SessionFilter{Status: store.SessionActive}, []string{"s3", "s1"}},
			{"active limit", store.SessionFilter{Status: store.SessionActive, Limit: 1}, []string{"s3"}},
			{"reflection pending", store.SessionFilter{ReflectionStatus: store.ReflectionPending}, []string{"s3", "s1"}},
			{"completed, no insight", store.SessionFilter{Status: store.SessionCompleted, ReflectionStatus: store.ReflectionNoInsight}, []string{"s4"}},
			{"since inclusive, until exclusive", store.SessionFilter{Since: at(1), Until: at(3)}, []string{"s3", "s2"}},
			{"since only", store.SessionFilter{Since: at(2)}, []string{"s4", "s3"}},
			{"nothing matches", store.SessionFilter{Status: store.SessionActive, ReflectionStatus: store.ReflectionProcessed}, []string{}},
		}
		for _, c := range cases {
			got, err := st.ListSessions(ctx(t), alice, c.f)
			require.NoError(t, err, c.name)
			assert.Equal(t, c.want, sessionIDs(got), c.name)
		}
		got, err := st.ListSessions(ctx(t), alice, store.SessionFilter{Limit: 1})
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.NotEmpty(t, got[0].ETag, "listed sessions carry their ETag")
	})
	t.Run("Insights", func(t *testing.T) {
		st := s.fresh(t)
		mk := func(id string, hours int, cat string, sessions []string, processed bool) *store.Insight {
			d := insight(id, at(hours), "text of "+id)
			d.Category, d.SessionIDs, d.Processed = cat, sessions, processed
			return d
		}
		lt := insight(store.LongTermID(alice), at(3), "profile")
		lt.InsightType = store.InsightLongTerm
		for _, d := range []*store.Insight{
			mk("in3", 2, "risk_profile", []string{"s2"}, false),
			lt,
			mk("in1", 0, "risk_profile", []string{"s1"}, false),
			mk("in4", 4, "risk_profile", []string{"s1"}, false),
			mk("in2", 1, "preference", []string{"s1", "s2"}, true),
		} {
			require.NoError(t, st.PutInsight(ctx(t), alice, d))
		}
		require.NoError(t, st.SupersedeInsight(ctx(t), alice, "in4", store.Supersession{By: "in3", Reason: store.ReasonDuplicate}))
		ltID := store.LongTermID(alice)
		cases := []struct {
			name string
			f    store.InsightFilter
			want []string
		}{
			{"all active newest first", store.InsightFilter{}, []string{ltID, "in3", "in2", "in1"}},
			{"limit keeps the newest", store.InsightFilter{Limit: 2}, []string{ltID, "in3"}},
			{"session type", store.InsightFilter{Type: store.InsightSession}, []string{"in3", "in2", "in1"}},
			{"long-term type", store.InsightFilter{Type: store.InsightLongTerm}, []string{ltID}},
			{"category", store.InsightFilter{Category: "risk_profile"}, []string{"in3", "in1"}},
			{"session id", store.InsightFilter{SessionID: "s1"}, []string{"in2", "in1"}},
			{"session id s2", store.InsightFilter{SessionID: "s2"}, []string{"in3", "in2"}},
			{"processed", store.InsightFilter{Processed: ptr(true)}, []string{"in2"}},
			{"unprocessed session insights", store.InsightFilter{Type: store.InsightSession, Processed: ptr(false)}, []string{"in3", "in1"}},
			{"unprocessed session insights, limit keeps the newest", store.InsightFilter{Type: store.InsightSession, Processed: ptr(false), Limit: 1}, []string{"in3"}},
			{"since inclusive, until exclusive", store.InsightFilter{Since: at(1), Until: at(3)}, []string{"in3", "in2"}},
			{"audit read", store.InsightFilter{IncludeSuperseded: true}, []string{"in4", ltID, "in3", "in2", "in1"}},
			{"audit read with filters", store.InsightFilter{IncludeSuperseded: true, SessionID: "s1", Category: "risk_profile"}, []string{"in4", "in1"}},
			{"nothing matches", store.InsightFilter{Category: "concern"}, []string{}},
		}
		for _, c := range cases {
			got, err := st.ListInsights(ctx(t), alice, c.f)
			require.NoError(t, err, c.name)
			assert.Equal(t, c.want, insightIDs(got), c.name)
		}
	})
}
