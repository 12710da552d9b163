package gateway

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/logtest"
)

// A chain whose agent session cannot move to the memory session it went
// on in (move refuses the id) stays under the id it is kept under: the
// response id names that one, whose entry the chain's next request
// finds, its agent session going on in the new memory session.
func TestAChainThatCannotMoveStaysUnderItsSession(t *testing.T) {
	t.Parallel()
	var logs logtest.Logs
	h := &Handler{log: logs.Logger(nil), sessions: newSessions(10, time.Hour, func(*agent.Session, bool) time.Duration { return 0 }, slog.New(slog.DiscardHandler))}
	t.Cleanup(func() { h.sessions.close(nil) })
	l, err := h.sessions.get("u", "chain-1")
	require.NoError(t, err)
	defer l.release()
	plan := &memoryPlan{sess: l.sess, lease: l}
	ch := &chain{session: "chain-1"}

	h.followTo(context.Background(), plan, ch, "chain-1/next") // not a session id: move refuses it
	assert.Equal(t, "chain-1", ch.session, "the response id names the session the chain is kept under")
	got, ok := sessionOfResponse(responseID(ch.session))
	assert.True(t, ok)
	assert.Equal(t, "chain-1", got)
	assert.Same(t, l.sess, plan.sess, "the request goes on in its agent session")
	assert.Equal(t, 1, h.sessions.inflightOf("u", "chain-1"), "the entry kept, with the request's lease")
	assert.Contains(t, logs.String(), "level=WARN")
	assert.Contains(t, logs.String(), "chain-1/next")

	next, err := h.sessions.get("u", "chain-1") // the chain's next request
	require.NoError(t, err)
	defer next.release()
	assert.Same(t, l.sess, next.sess)
}
