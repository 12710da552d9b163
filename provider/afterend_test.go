package provider_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
)

// A caller that keeps talking on an agent session after EndSession loses
// no turn, in any mode: the run's turn goes to a new memory session,
// which EndSession then ends in turn.
func TestARunAfterEndSessionIsStored(t *testing.T) {
	for _, mode := range []provider.Mode{provider.ModeManual, provider.ModeIdle} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			ctx := context.Background()
			s := openOffline(t, sqlitetest.NewFile(t), func(c *provider.Config) { c.Mode = mode })
			sess, err := s.a.NewUserSession("u1")
			require.NoError(t, err)
			_, err = s.a.Run(ctx, sess, agent.UserText("I am 35 and I want to retire at 60."))
			require.NoError(t, err)
			_, err = s.mem.EndSession(ctx, sess)
			require.NoError(t, err)

			_, err = s.a.Run(ctx, sess, agent.UserText("My old 401k from Quuxcorp holds $40,000."))
			require.NoError(t, err)
			turns := func() []string {
				var texts []string
				sessions, err := s.st.ListSessions(ctx, "u1", store.SessionFilter{})
				require.NoError(t, err)
				for _, d := range sessions {
					ts, err := s.st.ListTurns(ctx, "u1", d.ID, 0)
					require.NoError(t, err)
					for _, tr := range ts {
						for _, m := range tr.Messages {
							if m.Role == "user" {
								texts = append(texts, m.Content)
							}
						}
					}
				}
				return texts
			}
			assert.True(t, slicesHas(turns(), "Quuxcorp"), "the turn after the end is stored: %v", turns())
			assert.NotContains(t, s.logs.String(), "session already completed")

			res, err := s.mem.EndSession(ctx, sess)
			require.NoError(t, err, "the new memory session ends too")
			assert.NotEqual(t, sess.ID(), res.Session.ID)
		})
	}
}

func slicesHas(texts []string, word string) bool {
	for _, t := range texts {
		if strings.Contains(t, word) {
			return true
		}
	}
	return false
}
