package cosmos

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
)

// TestUnusualUserIDsEndToEnd runs a user's whole memory life on the test
// server for user ids that stress the partition key header: a
// conversation, its end, reflection, the long-term profile in the next
// session, export and forgetting.
func TestUnusualUserIDsEndToEnd(t *testing.T) {
	ctx := t.Context()
	s := openLauncher(t, nil)
	model, emb := offlineModels(t)
	mem, err := provider.New(s, provider.Config{Chat: model, Embedder: emb, Reflection: provider.ReflectManual})
	require.NoError(t, err)
	defer mem.Close(ctx)
	a := agent.New(model, agent.Config{ContextProviders: []agent.ContextProvider{mem}})

	users := []string{"🙂", "𝔘ser", "日本語", `a"b`, strings.Repeat("🙂", store.MaxIDBytes/4) + "日"}
	for _, user := range users {
		name := user
		if len(name) > 16 {
			name = "longest"
		}
		t.Run(name, func(t *testing.T) {
			sess, err := a.NewUserSession(user)
			require.NoError(t, err)
			require.NoError(t, mem.StartSession(ctx, sess))
			_, err = a.Run(ctx, sess, agent.UserText("I want to retire at 60."))
			require.NoError(t, err)
			res, err := mem.EndSession(ctx, sess)
			require.NoError(t, err, "EndSession")
			assert.Equal(t, store.SessionCompleted, res.Session.Status)
			assert.Equal(t, user, res.Session.UserID)

			sr, err := mem.Reflector().ReflectSession(ctx, user, sess.ID())
			require.NoError(t, err)
			require.NotEmpty(t, sr.Insights)
			pr, err := mem.Reflector().ReflectLongTerm(ctx, user)
			require.NoError(t, err)
			assert.Contains(t, pr.Profile.InsightText, "retire at 60")

			// The next session starts with the profile.
			next, err := a.NewUserSession(user)
			require.NoError(t, err)
			aic, err := mem.Invoking(ctx, &agent.InvokingContext{Agent: a, Session: next, Messages: []agent.Message{agent.UserText("hello")}})
			require.NoError(t, err)
			var block strings.Builder
			for _, m := range aic.Messages {
				block.WriteString(m.Text)
			}
			assert.Contains(t, block.String(), "retire at 60")

			var buf bytes.Buffer
			n, err := mem.ExportUser(ctx, user, &buf)
			require.NoError(t, err)
			assert.Positive(t, n)
			_, err = mem.ForgetUser(ctx, user)
			require.NoError(t, err)
			ss, err := s.ListSessions(ctx, user, store.SessionFilter{})
			require.NoError(t, err)
			assert.Empty(t, ss)
		})
	}
}
