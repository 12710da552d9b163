package memoryservice

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/prompts"
)

// An update whose long-term profile could not be made (the model failed
// the profile step) does not report "completed": it is failed, its error
// says the profile was not updated, and its result still lists the
// memory items it did write.
func TestUpdateWhoseProfileFailedSaysSo(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.HandleChat(func(r fakeopenai.Request) fakeopenai.Reply {
		if strings.HasPrefix(r.SystemText(), prompts.Marker(prompts.NameProfileSynthesis)) {
			return fakeopenai.Error(500, "the model is down")
		}
		return memoryModel(r)
	})
	srv.HandleEmbeddings(fakeEmbeddings)
	s := startFake(t, srv, Config{})
	s.createStore("support", nil)
	// An insight for the profile to fold in.
	code, item, _ := s.do("POST", "/memory_stores/support/items", map[string]any{"scope": "alice", "kind": "user_profile", "content": "Drinks espresso every morning."})
	require.Equal(t, http.StatusOK, code, "%v", item)
	out := s.wait("support", s.update("support", "alice", 0, "Today's espresso was too bitter."))
	assert.Equal(t, "failed", out["status"], "%v", out)
	e, ok := out["error"].(map[string]any)
	require.True(t, ok, "an error: %v", out)
	assert.Equal(t, "profile_not_updated", e["code"])
	assert.Contains(t, e["message"], "profile")
	res, _ := out["result"].(map[string]any)
	assert.NotEmpty(t, items(res["memory_operations"], ""), "what it did write is listed: %v", out)
}
