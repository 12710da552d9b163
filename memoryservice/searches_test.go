package memoryservice

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/prompts"
)

// searchWith posts search_memories with items (user messages) after the
// search prev ("" for none); it returns the status and the answer.
func (s *server) searchWith(name, scope, prev string, texts ...string) (int, map[string]any) {
	s.t.Helper()
	var its []any
	for _, t := range texts {
		its = append(its, user(t))
	}
	body := map[string]any{"scope": scope, "items": its, "options": map[string]any{"max_memories": 5}}
	if prev != "" {
		body["previous_search_id"] = prev
	}
	code, out, _ := s.do("POST", "/memory_stores/"+name+":search_memories", body)
	return code, out
}

func (s *server) searchID(name, scope, prev string, texts ...string) (string, string) {
	s.t.Helper()
	code, out := s.searchWith(name, scope, prev, texts...)
	require.Equal(s.t, http.StatusOK, code, "%v", out)
	id, _ := out["search_id"].(string)
	require.NotEmpty(s.t, id)
	return id, contents(items(out["memories"], "memory_item"))
}

// A search that continues an earlier one reads the new messages in the
// light of the earlier ones: a vague follow-up finds what the
// conversation is about, which it alone does not.
func TestSearchContinuesAnEarlierSearch(t *testing.T) {
	s := start(t, dbPath(t), Config{})
	s.createStore("travel", nil)
	s.wait("travel", s.update("travel", "alice", 0, "I am planning a trip to Lisbon in May with my sister."))
	s.wait("travel", s.update("travel", "alice", 0, "My favourite food is ramen."))

	first, found := s.searchID("travel", "alice", "", "I am going to Lisbon soon.")
	require.Contains(t, found, "Lisbon")
	const followUp = "What should I pack for it?"
	_, alone := s.searchID("travel", "alice", "", followUp)
	assert.NotContains(t, alone, "Lisbon", "the follow-up alone does not say where")
	second, continued := s.searchID("travel", "alice", first, followUp)
	assert.Contains(t, continued, "Lisbon", "the follow-up continues the conversation")
	assert.NotEqual(t, first, second)
	// A chain: the third sees the first's messages through the second.
	_, third := s.searchID("travel", "alice", second, "And when?")
	assert.Contains(t, third, "Lisbon")
}

// previous_search_id must name a search of the same store and scope that
// is still kept: anything else is a 400 naming the field, and no other
// scope's conversation is reachable through it.
func TestPreviousSearchIDMustBeOfTheSameScope(t *testing.T) {
	s := start(t, dbPath(t), Config{})
	s.createStore("travel", nil)
	s.createStore("other", nil)
	s.wait("travel", s.update("travel", "alice", 0, "I am planning a trip to Lisbon in May."))
	bobs, _ := s.searchID("travel", "bob", "", "I am going to Lisbon soon.")
	elsewhere, _ := s.searchID("other", "alice", "", "I am going to Lisbon soon.")
	for _, id := range []string{"memsearch_nope", bobs, elsewhere, strings.Repeat("x", 5000)} {
		code, out := s.searchWith("travel", "alice", id, "What should I pack for it?")
		require.Equal(t, http.StatusBadRequest, code, "%v", out)
		assert.Equal(t, "previous_search_id", errorParam(t, out))
	}
}

// delete_scope forgets the scope's searches, even of a scope that holds
// no memories (answered 404); deleting the store forgets all of its.
func TestForgettingDropsTheSearches(t *testing.T) {
	s := start(t, dbPath(t), Config{})
	s.createStore("travel", nil)
	alice, _ := s.searchID("travel", "alice", "", "I am going to Lisbon soon.")
	bob, _ := s.searchID("travel", "bob", "", "I am going to Porto soon.")
	code, out, _ := s.do("POST", "/memory_stores/travel:delete_scope", map[string]any{"scope": "alice"})
	require.Equal(t, http.StatusNotFound, code, "only searched, alice has no memories: %v", out)
	code, out = s.searchWith("travel", "alice", alice, "And then?")
	assert.Equal(t, http.StatusBadRequest, code, "%v", out)
	bob2, _ := s.searchID("travel", "bob", bob, "And then?")

	code, out, _ = s.do("DELETE", "/memory_stores/travel", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	s.createStore("travel", nil)
	code, out = s.searchWith("travel", "bob", bob2, "And then?")
	assert.Equal(t, http.StatusBadRequest, code, "a new store of the same name has none of the old one's: %v", out)
}

// Searches are kept for Config.SearchTTL and, after a sweep, at most
// Config.MaxSearches of them per memory store, the oldest dropped first.
func TestSearchesAreKeptForALimitedTimeAndNumber(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	s := start(t, dbPath(t), Config{Now: clock, SearchTTL: time.Minute, MaxSearches: 2})
	s.createStore("travel", nil)
	a, _ := s.searchID("travel", "alice", "", "Lisbon")
	advance(59 * time.Second)
	a2, _ := s.searchID("travel", "alice", a, "And then?") // still kept
	advance(2 * time.Second)
	code, out := s.searchWith("travel", "alice", a, "And then?")
	assert.Equal(t, http.StatusBadRequest, code, "expired: %v", out)
	assert.Contains(t, out["error"].(map[string]any)["message"], "kept")

	b, _ := s.searchID("travel", "bob", "", "Porto")
	c, _ := s.searchID("travel", "carol", "", "Faro") // the third: a2 goes at the sweep
	require.NoError(t, s.svc.sweep(context.Background()))
	code, _ = s.searchWith("travel", "alice", a2, "And then?")
	assert.Equal(t, http.StatusBadRequest, code, "dropped for the cap")
	s.searchID("travel", "bob", b, "And then?")
	s.searchID("travel", "carol", c, "And then?")
}

// A search record keeps the newest messages, within its bounds.
func TestSearchRecordsAreBounded(t *testing.T) {
	var turns []prompts.Turn
	for i := range 50 {
		turns = append(turns, prompts.Turn{Role: "user", Text: fmt.Sprintf("message %d", i)})
	}
	kept := boundTurns(turns)
	require.Len(t, kept, maxSearchTurns)
	assert.Equal(t, "message 49", kept[len(kept)-1].Text)
	assert.Equal(t, fmt.Sprintf("message %d", 50-maxSearchTurns), kept[0].Text)

	big := strings.Repeat("é", maxSearchBytes) // two bytes each
	kept = boundTurns([]prompts.Turn{{Role: "user", Text: "old"}, {Role: "user", Text: big + "end"}})
	require.Len(t, kept, 1)
	assert.LessOrEqual(t, len(kept[0].Text), maxSearchBytes)
	assert.True(t, utf8.ValidString(kept[0].Text))
	assert.True(t, strings.HasSuffix(kept[0].Text, "end"))

	half := strings.Repeat("x", maxSearchBytes/2+1)
	kept = boundTurns([]prompts.Turn{{Text: half}, {Text: half}, {Text: "last"}})
	require.Len(t, kept, 2, "the oldest that does not fit goes")
	assert.Equal(t, "last", kept[1].Text)
}

// In a store whose memories expire sooner than searches are kept, a
// search expires with them.
func TestASearchExpiresWithItsStoresMemories(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := start(t, dbPath(t), Config{Now: clock})
	s.createStore("brief", map[string]any{"default_ttl_seconds": 60})
	id, _ := s.searchID("brief", "alice", "", "Lisbon")
	mu.Lock()
	now = now.Add(61 * time.Second)
	mu.Unlock()
	code, out := s.searchWith("brief", "alice", id, "And then?")
	assert.Equal(t, http.StatusBadRequest, code, "%v", out)
}
