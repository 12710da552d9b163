package gateway_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/fakeopenai"
)

// The gateway records through the memory store's own provider: a scope
// deleted through the Memory Store API drops the session the gateway had
// open, and the user's next request begins a new one, recorded.
func TestAScopeDeletedThroughTheMemoryStoreAPIStaysForgottenAtTheGateway(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	r.ask("alice", "s1", "My passport number is X1234567.", fakeopenai.Text("Noted."))
	status, _, b := r.do(http.MethodPost, "/memory_stores/"+storeName+":delete_scope", nil, map[string]any{"scope": "alice"})
	require.Equal(t, http.StatusOK, status, string(b))
	require.Empty(t, r.turns("alice"))

	req, state := r.ask("alice", "s1", "What else should I pack?", fakeopenai.Text("A toothbrush."))
	assert.Equal(t, "used; retrieved=0", state)
	for _, m := range req.Chat.Messages {
		assert.NotContains(t, m.Content, "X1234567", "nothing forgotten reaches the model")
	}
	msgs := r.turns("alice")
	require.Len(t, msgs, 2, "the next turn is recorded")
	assert.Equal(t, "What else should I pack?", msgs[0].Content)
}
