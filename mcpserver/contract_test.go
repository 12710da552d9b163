package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/mcpserver"
	"github.com/agentmemory/agentmemory/reflection"
	"github.com/agentmemory/agentmemory/store"
)

type recorded struct {
	Stored          bool
	AlreadyRecorded bool `json:"already_recorded"`
}

// turnCount is the number of turns ever stored in a session.
func turnCount(t *testing.T, s *stack, user, session string) int {
	t.Helper()
	turns, err := s.st.ListTurns(context.Background(), user, session, 0)
	require.NoError(t, err)
	return len(turns)
}

func TestRecordTurnWithATurnIDIsIdempotent(t *testing.T) {
	ctx := context.Background()
	s := newStack(t)
	dana := s.connect(t, mcpserver.Config{UserID: "dana"})
	eve := s.connect(t, mcpserver.Config{UserID: "eve"})
	record := func(cs *mcp.ClientSession, session, turn, user string) recorded {
		t.Helper()
		args := map[string]any{"session_id": session, "user": user, "assistant": "Noted."}
		if turn != "" {
			args["turn_id"] = turn
		}
		var out recorded
		require.Empty(t, call(t, cs, "record_turn", args, &out))
		require.True(t, out.Stored)
		return out
	}

	assert.False(t, record(dana, "chat-1", "t1", "My old 401k from Acme holds $40,000.").AlreadyRecorded)
	assert.True(t, record(dana, "chat-1", "t1", "My old 401k from Acme holds $40,000.").AlreadyRecorded, "a retry")
	assert.True(t, record(dana, "chat-1", "t1", "A different text under the same turn id.").AlreadyRecorded)
	assert.Equal(t, 1, turnCount(t, s, "dana", "chat-1"), "the same turn id is stored once")
	record(dana, "chat-1", "t2", "I want to retire at 60.")
	assert.Equal(t, 2, turnCount(t, s, "dana", "chat-1"), "another turn id is another turn")

	// Without a turn id a repeat is recorded again: the contract holds only with the id.
	record(dana, "chat-1", "", "I'm nervous about volatility.")
	record(dana, "chat-1", "", "I'm nervous about volatility.")
	assert.Equal(t, 4, turnCount(t, s, "dana", "chat-1"))

	// A turn id is scoped to its session and its user.
	assert.False(t, record(dana, "chat-2", "t1", "My old 401k from Acme holds $40,000.").AlreadyRecorded)
	assert.Equal(t, 1, turnCount(t, s, "dana", "chat-2"))
	assert.False(t, record(eve, "chat-1", "t1", "My old 401k from Acme holds $40,000.").AlreadyRecorded)
	assert.Equal(t, 1, turnCount(t, s, "eve", "chat-1"))
	d1, err := s.st.ListTurns(ctx, "dana", "chat-1", 0)
	require.NoError(t, err)
	d2, err := s.st.ListTurns(ctx, "dana", "chat-2", 0)
	require.NoError(t, err)
	e1, err := s.st.ListTurns(ctx, "eve", "chat-1", 0)
	require.NoError(t, err)
	ids := map[string]bool{}
	for _, turns := range [][]*store.Turn{d1, d2, e1} {
		for _, m := range turns[0].Messages {
			assert.False(t, ids[m.ID], "message id %s reused across sessions or users", m.ID)
			ids[m.ID] = true
		}
	}

	// A retry still holds once the turn has been pruned out of the session
	// into an interaction document.
	for i := 3; turnCount(t, s, "dana", "chat-1") < 12; i++ {
		record(dana, "chat-1", fmt.Sprintf("t%d", i), "More about my savings plan.")
	}
	require.NoError(t, s.mem.Flush(ctx))
	doc, err := s.st.GetSession(ctx, "dana", "chat-1")
	require.NoError(t, err)
	require.GreaterOrEqual(t, doc.State.PrunedThrough, 10, "turn 1 is pruned into an interaction")
	before, err := s.st.ListInteractions(ctx, "dana", store.InteractionFilter{SessionID: "chat-1"})
	require.NoError(t, err)
	require.Len(t, before, 1)
	assert.True(t, record(dana, "chat-1", "t1", "My old 401k from Acme holds $40,000.").AlreadyRecorded)
	require.NoError(t, s.mem.Flush(ctx))
	assert.Equal(t, 12, turnCount(t, s, "dana", "chat-1"))

	// And once the session has ended; a new turn then names the problem.
	require.Empty(t, call(t, dana, "end_session", map[string]any{"session_id": "chat-1"}, nil))
	assert.True(t, record(dana, "chat-1", "t2", "I want to retire at 60.").AlreadyRecorded)
	assert.Contains(t, call(t, dana, "record_turn", map[string]any{"session_id": "chat-1", "turn_id": "t99", "user": "hi"}, nil),
		`session "chat-1" has ended`)
	after, err := s.st.ListInteractions(ctx, "dana", store.InteractionFilter{SessionID: "chat-1"})
	require.NoError(t, err)
	n := 0
	for _, in := range after {
		for _, id := range in.TurnIDs {
			if ids[id] {
				n++
			}
		}
	}
	assert.Equal(t, 2, n, "turn t1 of chat-1 (user and assistant messages) is in the interactions once")
}

// errorOf calls a tool that must fail and returns its error text.
func errorOf(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	got := call(t, cs, name, args, nil)
	require.NotEmpty(t, got, "%s must fail as a tool error", name)
	return got
}

func TestOversizedInputIsAToolErrorNamingTheLimit(t *testing.T) {
	s := newStack(t)
	cs := s.connect(t, mcpserver.Config{UserID: "dana"})
	twoMB := strings.Repeat("retirement savings ", 2<<20/19) // as reported
	huge := twoMB[:100_000]                                  // beyond every limit
	for _, c := range []struct {
		tool, arg string
		args      map[string]any
		limit     int
	}{
		{"retrieve_user_facts", "query", map[string]any{"query": twoMB}, mcpserver.MaxQueryLength},
		{"search_memory", "query", map[string]any{"query": huge}, mcpserver.MaxQueryLength},
		{"record_turn", "user", map[string]any{"session_id": "s", "user": huge}, mcpserver.MaxTextLength},
		{"record_turn", "assistant", map[string]any{"session_id": "s", "user": "hi", "assistant": huge}, mcpserver.MaxTextLength},
		{"record_turn", "turn_id", map[string]any{"session_id": "s", "user": "hi", "turn_id": huge}, mcpserver.MaxIDLength},
		{"record_turn", "session_id", map[string]any{"session_id": huge, "user": "hi"}, mcpserver.MaxIDLength},
		{"end_session", "session_id", map[string]any{"session_id": huge}, mcpserver.MaxIDLength},
		{"forget_insight", "insight_id", map[string]any{"insight_id": huge}, mcpserver.MaxIDLength},
		{"forget_session", "session_id", map[string]any{"session_id": huge}, mcpserver.MaxIDLength},
		{"forget_interaction", "interaction_id", map[string]any{"interaction_id": huge}, mcpserver.MaxIDLength},
	} {
		got := errorOf(t, cs, c.tool, c.args)
		assert.Contains(t, got, c.arg+" is too long", c.tool)
		assert.Contains(t, got, "at most "+itoa(c.limit)+" characters", c.tool)
		assert.Less(t, len(got), 300, "%s: the error does not echo the input", c.tool)
	}
	_, err := s.st.GetSession(context.Background(), "dana", "s")
	assert.ErrorIs(t, err, store.ErrNotFound, "nothing was recorded")

	// The limit is in characters and holds for any: a query of the longest
	// length in four-byte characters is searched.
	long := strings.Repeat("𝄞", mcpserver.MaxQueryLength)
	var facts struct{ Answer string }
	require.Empty(t, call(t, cs, "retrieve_user_facts", map[string]any{"query": long}, &facts))
	require.Empty(t, call(t, cs, "search_memory", map[string]any{"query": long}, nil))
	assert.Contains(t, errorOf(t, cs, "search_memory", map[string]any{"query": long + "x"}), "query is too long")
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// props returns the input schema properties of every tool, as a client
// lists them.
func props(t *testing.T, cs *mcp.ClientSession) map[string]map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]map[string]any{}
	for tool, err := range cs.Tools(context.Background(), nil) {
		require.NoError(t, err)
		b, err := json.Marshal(tool.InputSchema)
		require.NoError(t, err)
		var s struct {
			Properties map[string]map[string]any
		}
		require.NoError(t, json.Unmarshal(b, &s))
		out[tool.Name] = s.Properties
	}
	return out
}

func TestSchemasAdvertiseTheBoundsTheServerEnforces(t *testing.T) {
	s := newStack(t)
	cs := s.connect(t, mcpserver.Config{UserID: "dana"})
	p := props(t, cs)

	topK := p["search_memory"]["top_k"]
	assert.EqualValues(t, 1, topK["minimum"])
	assert.EqualValues(t, mcpserver.MaxTopK, topK["maximum"])
	assert.Equal(t, "integer", topK["type"])
	kinds, _ := p["search_memory"]["kinds"]["items"].(map[string]any)
	require.NotNil(t, kinds, "kinds has an items schema")
	var want []any
	for _, k := range store.Kinds {
		want = append(want, string(k))
	}
	assert.ElementsMatch(t, want, kinds["enum"])
	var cats []any
	for _, c := range reflection.DefaultCategories {
		cats = append(cats, c.Name)
	}
	assert.ElementsMatch(t, cats, p["list_insights"]["category"]["enum"], "the categories reflection produces")
	assert.EqualValues(t, mcpserver.MaxQueryLength, p["retrieve_user_facts"]["query"]["maxLength"])
	assert.EqualValues(t, mcpserver.MaxQueryLength, p["search_memory"]["query"]["maxLength"])
	assert.EqualValues(t, mcpserver.MaxTextLength, p["record_turn"]["user"]["maxLength"])
	assert.EqualValues(t, mcpserver.MaxTextLength, p["record_turn"]["assistant"]["maxLength"])
	require.Contains(t, p["record_turn"], "turn_id")
	assert.Contains(t, p["record_turn"]["turn_id"]["description"], "same turn_id")
	for tool, ps := range p {
		for name, prop := range ps {
			if prop["type"] == "string" {
				assert.True(t, prop["maxLength"] != nil || prop["enum"] != nil, "%s.%s: every string argument is bounded: %v", tool, name, prop)
			}
		}
	}

	// The server holds to them, and says which bound was crossed.
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"search_memory", map[string]any{"query": "x", "top_k": 0}, "top_k 0 is outside 1 to 50"},
		{"search_memory", map[string]any{"query": "x", "top_k": 51}, "top_k 51 is outside 1 to 50"},
		{"search_memory", map[string]any{"query": "x", "top_k": 2.5}, "top_k must be a whole number"},
		{"search_memory", map[string]any{"query": "x", "top_k": "5"}, "top_k must be an integer, not a string"},
		{"search_memory", map[string]any{"query": "x", "kinds": []string{"insights", "emails"}}, `kinds[1] "emails" is not one of interactions, insights, session_summaries`},
		{"list_insights", map[string]any{"category": "hobbies"}, `category "hobbies" is not one of demographics,`},
		{"search_memory", map[string]any{"query": "x", "user_id": "eve"}, `unknown argument "user_id"`},
		{"record_turn", map[string]any{"user": "hi"}, "session_id is required"},
		{"record_turn", map[string]any{"session_id": "s", "user": "hi", "turn_id": ""}, "turn_id is empty"},
	} {
		assert.Contains(t, errorOf(t, cs, c.tool, c.args), c.want, "%s %v", c.tool, c.args)
	}
	var found struct{ Documents []document }
	require.Empty(t, call(t, cs, "search_memory", map[string]any{"query": "x", "top_k": mcpserver.MaxTopK}, &found), "the maximum itself is accepted")
}

func TestAnnotationsAreTrue(t *testing.T) {
	ctx := context.Background()
	s := newStack(t)
	cs := s.connect(t, mcpserver.Config{UserID: "dana"})
	tools := map[string]*mcp.Tool{}
	for tool, err := range cs.Tools(ctx, nil) {
		require.NoError(t, err)
		tools[tool.Name] = tool
		require.NotNil(t, tool.Annotations, tool.Name)
		require.NotNil(t, tool.Annotations.OpenWorldHint, tool.Name)
		assert.False(t, *tool.Annotations.OpenWorldHint, "%s reaches only this memory", tool.Name)
	}
	for _, name := range []string{"retrieve_user_facts", "search_memory", "get_user_context", "list_insights"} {
		assert.True(t, tools[name].Annotations.ReadOnlyHint, name)
	}
	hints := func(name string) (idempotent, destructive bool) {
		a := tools[name].Annotations
		assert.False(t, a.ReadOnlyHint, name)
		require.NotNil(t, a.DestructiveHint, name)
		return a.IdempotentHint, *a.DestructiveHint
	}
	for name, want := range map[string][2]bool{
		"record_turn":        {true, false}, // with turn_id, tested above; only adds
		"end_session":        {true, false}, // ending again reports the summary; nothing is lost
		"update_profile":     {true, true},  // rewrites the profile; again with nothing new changes nothing
		"forget_insight":     {true, true},
		"forget_session":     {true, true},
		"forget_interaction": {true, true},
	} {
		idem, destr := hints(name)
		assert.Equal(t, want, [2]bool{idem, destr}, "%s: idempotent, destructive", name)
	}
	assert.Contains(t, tools["record_turn"].Description, "without turn_id", "the description says where idempotency ends")

	// update_profile and forget_insight, called again, change nothing more.
	require.Empty(t, call(t, cs, "record_turn", map[string]any{"session_id": "s", "turn_id": "1", "user": "I'm worried about inflation eating my savings."}, nil))
	require.Empty(t, call(t, cs, "end_session", map[string]any{"session_id": "s"}, nil))
	require.NoError(t, s.mem.Flush(ctx))
	var prof struct {
		Profile string
		Folded  int `json:"insights_folded_in"`
	}
	require.Empty(t, call(t, cs, "update_profile", nil, &prof))
	require.Positive(t, prof.Folded)
	first, err := s.st.GetInsight(ctx, "dana", store.LongTermID("dana"))
	require.NoError(t, err)
	require.Empty(t, call(t, cs, "update_profile", nil, &prof))
	assert.Zero(t, prof.Folded)
	again, err := s.st.GetInsight(ctx, "dana", store.LongTermID("dana"))
	require.NoError(t, err)
	assert.Equal(t, first.UpdatedAt, again.UpdatedAt, "the profile is not rewritten")
	assert.Equal(t, first.InsightText, again.InsightText)

	ins, err := s.st.ListInsights(ctx, "dana", store.InsightFilter{Type: store.InsightSession})
	require.NoError(t, err)
	require.NotEmpty(t, ins)
	require.Empty(t, call(t, cs, "forget_insight", map[string]any{"insight_id": ins[0].ID}, nil))
	after, err := s.st.ListInsights(ctx, "dana", store.InsightFilter{IncludeSuperseded: true})
	require.NoError(t, err)
	assert.Contains(t, call(t, cs, "forget_insight", map[string]any{"insight_id": ins[0].ID}, nil), "no insight",
		"forgetting again says it is gone")
	still, err := s.st.ListInsights(ctx, "dana", store.InsightFilter{IncludeSuperseded: true})
	require.NoError(t, err)
	assert.Equal(t, after, still, "and changes nothing")
}
