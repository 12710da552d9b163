package mcpserver_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/llm/offline"
	"github.com/agentmemory/agentmemory/mcpserver"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// stack is the embedded default: SQLite in a temporary directory, the
// offline client and the lexical embedder.
type stack struct {
	st  *sqlite.Store
	mem *provider.MemoryProvider
}

func newStack(t *testing.T) *stack {
	t.Helper()
	return newStackOn(t, sqlite.Config{Dimensions: 384})
}

func newStackOn(t *testing.T, cfg sqlite.Config) *stack {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlitetest.NewFile(t), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	client, err := offline.New(offline.Config{})
	require.NoError(t, err)
	emb, err := lexical.New(lexical.Config{})
	require.NoError(t, err)
	mem, err := provider.New(st, provider.Config{Chat: client, Embedder: emb, RetryBackoff: time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	t.Cleanup(func() { mem.Close(context.Background()) })
	return &stack{st: st, mem: mem}
}

// connect serves user's memory and returns a connected client session.
func (s *stack) connect(t *testing.T, cfg mcpserver.Config) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	srv, err := mcpserver.New(s.mem, s.st, cfg)
	require.NoError(t, err)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and decodes its structured output into out; it
// returns the tool's error text, if it failed.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, "protocol error calling %s", name)
	if res.IsError {
		var texts []string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				texts = append(texts, tc.Text)
			}
		}
		return strings.Join(texts, " ")
	}
	if out != nil {
		b, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, out), "%s", b)
	}
	return ""
}

type document struct {
	Kind, ID, Text string
	SessionID      string `json:"session_id"`
}

func TestToolsRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := newStack(t)
	cs := s.connect(t, mcpserver.Config{UserID: "dana"})

	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		require.NoError(t, err)
		names = append(names, tool.Name)
		props, _ := tool.InputSchema.(map[string]any)["properties"].(map[string]any)
		_, has := props["user_id"]
		assert.False(t, has, "%s: no tool takes a user id", tool.Name)
	}
	slices.Sort(names)
	assert.Equal(t, []string{"end_session", "forget_insight", "forget_interaction", "forget_session", "get_user_context", "list_insights", "record_turn", "retrieve_user_facts", "search_memory", "update_profile"}, names)

	exchanges := [][2]string{
		{"I'm 35 and married, and I want to retire at 60.", "Let's plan for it."},
		{"My old 401k from Acme holds $40,000.", "We can roll it over."},
		{"I'm nervous about market volatility.", "That's common."},
	}
	for _, e := range exchanges {
		var rec struct{ Stored bool }
		require.Empty(t, call(t, cs, "record_turn", map[string]any{"session_id": "chat-1", "user": e[0], "assistant": e[1]}, &rec))
		assert.True(t, rec.Stored)
	}
	var end struct {
		Summary      string
		Interactions int
	}
	require.Empty(t, call(t, cs, "end_session", map[string]any{"session_id": "chat-1"}, &end))
	assert.Equal(t, 1, end.Interactions)
	assert.NotEmpty(t, end.Summary)
	require.NoError(t, s.mem.Flush(ctx)) // reflection runs in the background

	var found struct{ Documents []document }
	require.Empty(t, call(t, cs, "search_memory", map[string]any{"query": "Acme 401k", "kinds": []string{"interactions"}}, &found))
	require.NotEmpty(t, found.Documents)
	assert.Equal(t, "interactions", found.Documents[0].Kind)
	assert.Contains(t, found.Documents[0].Text, "$40,000")
	assert.Equal(t, "chat-1", found.Documents[0].SessionID)

	var facts struct{ Answer string }
	require.Empty(t, call(t, cs, "retrieve_user_facts", map[string]any{"query": "What is in my Acme 401k?"}, &facts))
	assert.Contains(t, facts.Answer, "$40,000")

	var list struct {
		Insights []struct{ ID, Category, Text string }
	}
	require.Empty(t, call(t, cs, "list_insights", nil, &list))
	require.NotEmpty(t, list.Insights, "the session was reflected on when it ended")
	cats := map[string]string{}
	for _, in := range list.Insights {
		cats[in.Category] = in.ID
	}
	assert.Contains(t, cats, "concern")

	var prof struct {
		Profile string
		Folded  int `json:"insights_folded_in"`
	}
	require.Empty(t, call(t, cs, "update_profile", nil, &prof))
	assert.Equal(t, len(list.Insights), prof.Folded)
	assert.Contains(t, prof.Profile, "retire at 60")

	var uc struct {
		Profile        string
		RecentSessions []struct{ ID, Summary string } `json:"recent_sessions"`
	}
	require.Empty(t, call(t, cs, "get_user_context", nil, &uc))
	assert.Equal(t, prof.Profile, uc.Profile)
	require.Len(t, uc.RecentSessions, 1)
	assert.Equal(t, "chat-1", uc.RecentSessions[0].ID)

	var forgot struct {
		Forgotten  string
		Deleted    map[string]int
		Rewritten  []string
		LogRecord  int64               `json:"log_record"`
		DeletedIDs map[string][]string `json:"deleted_ids"`
	}
	require.Empty(t, call(t, cs, "forget_insight", map[string]any{"insight_id": cats["concern"]}, &forgot))
	assert.Equal(t, cats["concern"], forgot.Forgotten)
	assert.Equal(t, map[string]int{"insights": 1}, forgot.Deleted, "the conversation stays without include_conversation")
	assert.Equal(t, []string{"insights/" + store.LongTermID("dana")}, forgot.Rewritten, "the profile is made anew")
	assert.EqualValues(t, 1, forgot.LogRecord)
	require.Empty(t, call(t, cs, "list_insights", map[string]any{"category": "concern"}, &list))
	assert.Empty(t, list.Insights)
	audit, err := s.st.ListInsights(ctx, "dana", store.InsightFilter{Category: "concern", IncludeSuperseded: true})
	require.NoError(t, err)
	assert.Empty(t, audit, "deleted, not marked")
	require.Empty(t, call(t, cs, "get_user_context", nil, &uc))
	assert.NotContains(t, uc.Profile, "volatility", "the profile no longer holds the concern")
	assert.Contains(t, uc.Profile, "retire at 60")

	// Forgetting the whole conversation: its summary leaves the context too.
	require.Empty(t, call(t, cs, "forget_session", map[string]any{"session_id": "chat-1"}, &forgot))
	assert.Equal(t, []string{"chat-1"}, forgot.DeletedIDs["session_summaries"])
	assert.Positive(t, forgot.Deleted["turns"])
	require.Empty(t, call(t, cs, "get_user_context", nil, &uc))
	assert.Empty(t, uc.RecentSessions)
	assert.Empty(t, uc.Profile, "every insight came from that conversation")
	require.Empty(t, call(t, cs, "list_insights", nil, &list))
	assert.Empty(t, list.Insights)
	require.Empty(t, call(t, cs, "retrieve_user_facts", map[string]any{"query": "market volatility"}, &facts))
	assert.NotContains(t, facts.Answer, "volatility")
	assert.Contains(t, call(t, cs, "forget_session", map[string]any{"session_id": "chat-1"}, nil), `no session "chat-1"`)
	require.Empty(t, call(t, cs, "record_turn", map[string]any{"session_id": "chat-1", "turn_id": "t1", "user": "A new start."}, nil),
		"the id can be used again")

}

func TestAServerReachesOnlyItsUser(t *testing.T) {
	ctx := context.Background()
	s := newStack(t)
	dana := s.connect(t, mcpserver.Config{UserID: "dana"})
	eve := s.connect(t, mcpserver.Config{UserID: "eve"})

	require.Empty(t, call(t, dana, "record_turn", map[string]any{"session_id": "s", "user": "I'm worried my secret code DANA-SECRET-7 leaks.", "assistant": "Noted."}, nil))
	require.Empty(t, call(t, dana, "end_session", map[string]any{"session_id": "s"}, nil))
	require.NoError(t, s.mem.Flush(ctx))
	var list struct {
		Insights []struct{ ID string }
	}
	require.Empty(t, call(t, dana, "list_insights", nil, &list))
	require.NotEmpty(t, list.Insights)

	// Eve's server sees none of it, whatever she asks or passes.
	var found struct{ Documents []document }
	require.Empty(t, call(t, eve, "search_memory", map[string]any{"query": "DANA-SECRET-7 secret code"}, &found))
	assert.Empty(t, found.Documents)
	var facts struct{ Answer string }
	require.Empty(t, call(t, eve, "retrieve_user_facts", map[string]any{"query": "dana's secret code"}, &facts))
	assert.NotContains(t, facts.Answer, "DANA-SECRET")
	assert.Contains(t, call(t, eve, "forget_insight", map[string]any{"insight_id": list.Insights[0].ID}, nil), "no insight")
	assert.Contains(t, call(t, eve, "end_session", map[string]any{"session_id": "s"}, nil), `no session "s"`)
	// An extra argument cannot change the user: it is refused.
	assert.Contains(t, call(t, eve, "search_memory", map[string]any{"query": "secret", "user_id": "dana"}, &found), `unknown argument "user_id"`)

	in, err := s.st.GetInsight(ctx, "dana", list.Insights[0].ID)
	require.NoError(t, err)
	assert.False(t, in.Superseded(), "dana's insight untouched")
}

func TestBadInputIsAToolErrorNamingTheProblem(t *testing.T) {
	s := newStack(t)
	cs := s.connect(t, mcpserver.Config{UserID: "dana"})
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"retrieve_user_facts", map[string]any{"query": "   "}, "query is empty"},
		{"search_memory", map[string]any{"query": "x", "top_k": 500}, "top_k 500"},
		{"search_memory", map[string]any{"query": "x", "kinds": []string{"emails"}}, `"emails" is not one of`},
		{"record_turn", map[string]any{"session_id": "a b/c", "user": "hi"}, "session_id"},
		{"record_turn", map[string]any{"session_id": "ok", "user": " "}, "user is empty"},
		{"forget_insight", map[string]any{"insight_id": ""}, "insight_id"},
		{"end_session", map[string]any{"session_id": "never-started"}, `no session "never-started"`},
	} {
		got := call(t, cs, c.tool, c.args, nil)
		assert.Contains(t, got, c.want, "%s %v", c.tool, c.args)
	}
}

func TestReadOnlyServer(t *testing.T) {
	s := newStack(t)
	cs := s.connect(t, mcpserver.Config{UserID: "dana", ReadOnly: true})
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		require.NoError(t, err)
		names = append(names, tool.Name)
		assert.True(t, tool.Annotations.ReadOnlyHint, tool.Name)
	}
	slices.Sort(names)
	assert.Equal(t, []string{"get_user_context", "list_insights", "retrieve_user_facts", "search_memory"}, names)
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "record_turn", Arguments: map[string]any{"session_id": "s", "user": "hi"}})
	assert.Error(t, err, "a write tool does not exist on a read-only server")
}

func TestNewValidates(t *testing.T) {
	s := newStack(t)
	for _, cfg := range []mcpserver.Config{{}, {UserID: "a/b"}, {UserID: "ok", RecentSessions: -1}} {
		_, err := mcpserver.New(s.mem, s.st, cfg)
		assert.Error(t, err, fmt.Sprintf("%+v", cfg))
	}
	_, err := mcpserver.New(nil, s.st, mcpserver.Config{UserID: "ok"})
	assert.Error(t, err)
}

// A forget call that deleted and logged but could not scrub the file (a
// reader held the WAL) is a tool error that says so, with the receipt.
func TestAForgetNotErasedSaysSo(t *testing.T) {
	ctx := context.Background()
	s := newStackOn(t, sqlite.Config{Dimensions: 384, BusyTimeout: 5 * time.Millisecond})
	cs := s.connect(t, mcpserver.Config{UserID: "dana"})
	require.Empty(t, call(t, cs, "record_turn", map[string]any{"session_id": "tuesday", "user": "My old 401k is at Zyxwvutco."}, nil))
	require.Empty(t, call(t, cs, "end_session", map[string]any{"session_id": "tuesday"}, nil))
	require.NoError(t, s.mem.Flush(ctx))

	var db *sql.DB
	require.True(t, s.st.As(&db))
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	require.NoError(t, err)
	var n int
	require.NoError(t, tx.QueryRow(`SELECT count(*) FROM deletion_log`).Scan(&n))
	got := call(t, cs, "forget_session", map[string]any{"session_id": "tuesday"}, nil)
	require.NoError(t, tx.Rollback())
	assert.Contains(t, got, "forgotten and logged")
	assert.Contains(t, got, `"log_record":1`)
	assert.Contains(t, got, "readable in the store's files")
}
