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

// One update of six messages, each of its own topic, on the offline
// models: the scope's chat summary holds every one of them, and a search
// for each finds it (the first was once left out of the summary).
func TestOneUpdateOfSixTopicsFindsEach(t *testing.T) {
	s := start(t, dbPath(t), Config{RateLimit: -1})
	s.createStore("b", nil)
	topics := []string{"dark roast coffee", "peanut allergy", "saving for a house", "jazz concerts", "window seats", "a vegetarian diet"}
	var said []string
	for _, topic := range topics {
		said = append(said, "I care about "+topic+" a lot.")
	}
	out := s.wait("b", s.update("b", "one", 0, said...))
	require.Equal(t, "completed", out["status"], "%v", out)
	summaries := s.list("b", "one", "?kind=chat_summary")
	require.Len(t, summaries, 1)
	for _, topic := range topics {
		assert.Contains(t, summaries[0]["content"], topic)
		assert.Contains(t, contents(s.search("b", "one", "What do I think about "+topic+"?")), topic)
	}
}

// A scope whose long-term profile says exactly what its one insight says
// (the offline profile of a single insight is that insight's sentence)
// lists both items, which are two documents, but a search gives the
// statement once: the second copy would only take a result's place.
func TestSearchGivesAStatementOnce(t *testing.T) {
	s := start(t, dbPath(t), Config{RateLimit: -1})
	s.createStore("b", nil)
	for range 3 { // three sessions restate it: still one insight
		out := s.wait("b", s.update("b", "one", 0, "I care about saving for a house a lot."))
		require.Equal(t, "completed", out["status"], "%v", out)
	}
	profile := s.list("b", "one", "?kind=user_profile")
	require.Len(t, profile, 2, "the insight and the profile: %s", contents(profile))
	require.Equal(t, profile[0]["content"], profile[1]["content"])
	for _, query := range []string{"What do I think about saving for a house?", ""} {
		var found []map[string]any
		if query == "" { // no conversation: the static memories
			code, out, _ := s.do("POST", "/memory_stores/b:search_memories", map[string]any{"scope": "one"})
			require.Equal(t, http.StatusOK, code, "%v", out)
			found = items(out["memories"], "memory_item")
		} else {
			found = s.search("b", "one", query)
		}
		texts := map[string]int{}
		for _, m := range found {
			texts[m["content"].(string)]++
		}
		for text, n := range texts {
			assert.Equal(t, 1, n, "%q found %d times for %q", text, n, query)
		}
		assert.Contains(t, texts, "The user cares about saving for a house a lot.")
	}
}
