package reflection_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/llm/offline"
	"github.com/agentmemory/agentmemory/reflection"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// Every user id the store accepts reaches the long-term profile, the
// longest included; one byte more is refused before any work is done.
func TestLongestUserIDsReachTheProfile(t *testing.T) {
	ctx := context.Background()
	emb, err := lexical.New(lexical.Config{})
	require.NoError(t, err)
	st, err := sqlite.Open(ctx, sqlitetest.NewFile(t), sqlite.Config{Dimensions: emb.Dimensions()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	model, err := offline.New(offline.Config{})
	require.NoError(t, err)
	r, err := reflection.New(st, reflection.Config{Chat: model, Embedder: emb, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)

	fits := strings.Repeat("u", store.MaxIDBytes-len("longterm-")) // its profile id is exactly the limit
	users := map[string]string{
		"longest":            strings.Repeat("u", store.MaxIDBytes),
		"longest multi-byte": strings.Repeat("🙂", store.MaxIDBytes/4) + "日",
		"one over prefixed":  fits + "u",
		"prefix fits":        fits,
	}
	day := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	for name, user := range users {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, st.PutSession(ctx, user, &store.Session{ID: "s1", StartTime: day, Status: store.SessionCompleted}))
			require.NoError(t, st.PutInteraction(ctx, user, &store.Interaction{
				ID: store.InteractionID("s1", 1, 2), SessionID: "s1", Timestamp: day, FirstTurn: 1, LastTurn: 2,
				Content: "user: I want to retire at 60.\nassistant: Let's plan for it.",
			}))
			sr, err := r.ReflectSession(ctx, user, "s1")
			require.NoError(t, err)
			require.Len(t, sr.Insights, 1)

			res, err := r.ReflectLongTerm(ctx, user)
			require.NoError(t, err)
			require.NotNil(t, res.Profile)
			assert.Equal(t, store.LongTermID(user), res.Profile.ID)
			assert.LessOrEqual(t, len(res.Profile.ID), store.MaxIDBytes)
			assert.Equal(t, []string{sr.Insights[0].ID}, res.Folded)

			// The profile is found again: a second session's insight is
			// folded into it rather than starting a new one.
			require.NoError(t, st.PutSession(ctx, user, &store.Session{ID: "s2", StartTime: day.Add(24 * time.Hour), Status: store.SessionCompleted}))
			require.NoError(t, st.PutInteraction(ctx, user, &store.Interaction{
				ID: store.InteractionID("s2", 1, 2), SessionID: "s2", Timestamp: day.Add(24 * time.Hour), FirstTurn: 1, LastTurn: 2,
				Content: "user: I'm nervous about market volatility.\nassistant: That's common.",
			}))
			_, err = r.ReflectSession(ctx, user, "s2")
			require.NoError(t, err)
			res2, err := r.ReflectLongTerm(ctx, user)
			require.NoError(t, err)
			assert.Equal(t, res.Profile.ID, res2.Profile.ID)
			assert.Equal(t, res.Profile.CreatedAt, res2.Profile.CreatedAt, "the same profile, updated")
			assert.Contains(t, res2.Profile.InsightText, "retire at 60")
			assert.Contains(t, res2.Profile.InsightText, "volatility")
			prof, err := st.GetInsight(ctx, user, store.LongTermID(user))
			require.NoError(t, err)
			assert.Equal(t, res2.Profile.InsightText, prof.InsightText)
			assert.Len(t, prof.SourceInsightIDs, 2)

			_, err = r.Reconcile(ctx, user)
			require.NoError(t, err)
		})
	}
	assert.Equal(t, "longterm-"+fits, store.LongTermID(fits), "ids that fit keep their form")

	tooLong := strings.Repeat("u", store.MaxIDBytes+1)
	_, err = r.ReflectLongTerm(ctx, tooLong)
	require.ErrorIs(t, err, store.ErrInvalid)
	assert.ErrorContains(t, err, "at most 255")
}
