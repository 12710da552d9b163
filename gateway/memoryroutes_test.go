package gateway_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/gateway"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
)

type memoryList struct {
	Data []struct {
		ID, Kind, Content, Scope string
	} `json:"data"`
}

// itemsList lists scope through the Memory Store API's items:list.
func (r *rig) itemsList(scope string) []string {
	r.t.Helper()
	status, _, b := r.do(http.MethodPost, "/memory_stores/"+storeName+"/items:list", nil, map[string]any{"scope": scope})
	require.Equal(r.t, http.StatusOK, status, string(b))
	var page struct {
		Data []struct {
			MemoryID string `json:"memory_id"`
		} `json:"data"`
	}
	require.NoError(r.t, json.Unmarshal(b, &page))
	var ids []string
	for _, it := range page.Data {
		ids = append(ids, it.MemoryID)
	}
	return ids
}

// listMemory lists user's memories through the gateway.
func (r *rig) listMemory(user string) memoryList {
	r.t.Helper()
	status, _, b := r.do(http.MethodGet, "/v1/memory?user_id="+user, nil, nil)
	require.Equal(r.t, http.StatusOK, status, string(b))
	var l memoryList
	require.NoError(r.t, json.Unmarshal(b, &l))
	return l
}

type receipt struct {
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
	Receipt struct {
		Items []struct {
			Kind, ID, Action string
		} `json:"items"`
		LogSeq  int64  `json:"log_seq"`
		LogHash string `json:"log_hash"`
	} `json:"receipt"`
}

func TestMemoryRoutesListWhatTheMemoryStoreAPIListsAndForgetWithAReceipt(t *testing.T) {
	t.Parallel()
	// A session ends once idle for IdleTimeout after its last answer (a
	// request in flight holds it open; see the gateway's sessions): 300 ms
	// keeps alice's two turns in one session even when the second ask is
	// slow to follow the first (under -race on a busy machine), and still
	// ends it soon after.
	r := newRig(t, func(c *gateway.Config) { c.IdleTimeout = 300 * time.Millisecond })
	r.ask("alice", "s1", "My dog's name is Biscuit and I live in Lisbon.", fakeopenai.Text("Noted."))
	r.ask("alice", "s1", "I also play the cello on Sundays.", fakeopenai.Text("Lovely."))
	r.endSessions("alice")
	r.ask("bob", "s1", "I live in Oslo.", fakeopenai.Text("Noted."))
	r.endSessions("bob")

	mine := r.listMemory("alice")
	require.NotEmpty(t, mine.Data, "the ended session left memories")
	var ids []string
	for _, m := range mine.Data {
		assert.Equal(t, "alice", m.Scope)
		ids = append(ids, m.ID)
	}
	assert.ElementsMatch(t, r.itemsList("alice"), ids, "one memory, seen through both doors")

	// One memory, by its id; another user's id is not found for bob.
	victim := ids[0]
	status, _, b := r.do(http.MethodDelete, "/v1/memory/"+victim+"?user_id=bob", nil, nil)
	assert.Equal(t, http.StatusNotFound, status, string(b))
	status, _, b = r.do(http.MethodDelete, "/v1/memory/"+victim, map[string]string{gateway.UserHeader: "alice"}, nil)
	require.Equal(t, http.StatusOK, status, string(b))
	var rc receipt
	require.NoError(t, json.Unmarshal(b, &rc))
	assert.True(t, rc.Deleted)
	assert.NotEmpty(t, rc.Receipt.Items)
	assert.Positive(t, rc.Receipt.LogSeq, "the deletion log's record")
	assert.NotEmpty(t, rc.Receipt.LogHash)
	assert.NotContains(t, r.itemsList("alice"), victim)

	// Everything of alice; bob keeps his, exactly. (His ended session's
	// memories are awaited first: the reflection that makes his insight
	// runs in the background.)
	var bobs []string
	require.Eventually(t, func() bool { bobs = r.itemsList("bob"); return len(bobs) >= 2 }, 10*time.Second, 20*time.Millisecond,
		"bob's session summary and insight")
	status, _, b = r.do(http.MethodDelete, "/v1/memory?user_id=alice", nil, nil)
	require.Equal(t, http.StatusOK, status, string(b))
	require.NoError(t, json.Unmarshal(b, &rc))
	assert.Positive(t, rc.Receipt.LogSeq)
	assert.Empty(t, r.itemsList("alice"))
	assert.Empty(t, r.turns("alice"))
	assert.ElementsMatch(t, bobs, r.itemsList("bob"), "bob's memories are untouched")

	// The Memory Store API no longer knows the scope.
	status, _, b = r.do(http.MethodPost, "/memory_stores/"+storeName+":delete_scope", nil, map[string]any{"scope": "alice"})
	assert.Equal(t, http.StatusNotFound, status, string(b))

	// Alice talks again: a new memory, from scratch.
	req, _ := r.ask("alice", "s2", "What is the name of my dog?", fakeopenai.Text("I don't know."))
	for _, m := range req.Chat.Messages {
		assert.NotContains(t, m.Content, "Biscuit")
	}
}

func TestMemoryRoutesNeedAValidUser(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	status, _, b := r.do(http.MethodGet, "/v1/memory", nil, nil)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, string(b), `"param":"user_id"`)
	status, _, _ = r.do(http.MethodDelete, "/v1/memory?user_id=a%2Fb", nil, nil)
	assert.Equal(t, http.StatusBadRequest, status)
	status, _, _ = r.do(http.MethodDelete, "/v1/memory/p.bm9uZQ.eA", nil, nil)
	assert.Equal(t, http.StatusNotFound, status)
}
