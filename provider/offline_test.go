package provider_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/internal/logtest"
	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/keeper"
	"github.com/agentmemory/agentmemory/llm/offline"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/mem"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// offlineStack is the zero-setup default: SQLite, the offline client and
// the lexical embedder; no network.
type offlineStack struct {
	path string
	st   *sqlite.Store
	mem  *provider.MemoryProvider
	a    *agent.Agent
	chat agent.ChatClient
	logs *logtest.Logs
}

func openOffline(t *testing.T, path string, mut func(*provider.Config)) *offlineStack {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path, sqlite.Config{Dimensions: 384})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return openOfflineOn(t, st, path, mut)
}

// openOfflineOn is openOffline on a store the test opened itself.
func openOfflineOn(t *testing.T, st *sqlite.Store, path string, mut func(*provider.Config)) *offlineStack {
	t.Helper()
	client, err := offline.New(offline.Config{})
	require.NoError(t, err)
	emb, err := lexical.New(lexical.Config{})
	require.NoError(t, err)
	logs := &logtest.Logs{}
	cfg := provider.Config{UserID: "u1", Chat: client, Embedder: emb, RetryBackoff: time.Millisecond, Logger: logs.Logger(nil)}
	if mut != nil {
		mut(&cfg)
	}
	p, err := provider.New(st, cfg)
	require.NoError(t, err)
	a := agent.New(client, agent.Config{Instructions: "You are a financial advisor.", ContextProviders: []agent.ContextProvider{p}, Logger: cfg.Logger})
	return &offlineStack{path: path, st: st, mem: p, a: a, chat: client, logs: logs}
}

var questions = []string{
	"I am 35 and I want to retire at 60.",
	"My old 401k from Acme holds $40,000.",
	"Should I roll it over into a Roth IRA?",
	"I can save $500 a month.",
	"I worry about market volatility.",
}

func say(t *testing.T, s *offlineStack, sess *agent.Session, from, to int) {
	t.Helper()
	for i := from; i <= to; i++ {
		_, err := s.a.Run(context.Background(), sess, agent.UserText(fmt.Sprintf("%d. %s", i, questions[i%len(questions)])))
		require.NoError(t, err)
	}
}

func TestOfflineSQLiteFlow(t *testing.T) {
	ctx := context.Background()
	s := openOffline(t, sqlitetest.NewFile(t), nil)
	sess, err := s.a.NewUserSession("u1")
	require.NoError(t, err)
	say(t, s, sess, 1, 23)
	require.NoError(t, s.mem.Flush(ctx))

	docs, err := s.st.ListInteractions(ctx, "u1", store.InteractionFilter{SessionID: sess.ID()})
	require.NoError(t, err)
	require.Len(t, docs, 2)
	for _, d := range docs {
		assert.NotEmpty(t, d.Summary)
		assert.NotEmpty(t, d.Metadata.MentionedTopics)
		assert.False(t, d.MetadataPending)
	}
	assert.Contains(t, docs[0].Metadata.Entities, "$40,000")

	hits, err := s.st.SearchInteractions(ctx, "u1", store.SearchRequest{Text: "Roth IRA rollover"})
	require.NoError(t, err)
	assert.NotEmpty(t, hits)

	res, err := s.mem.EndSession(ctx, sess)
	require.NoError(t, err)
	assert.NotEmpty(t, res.Session.Summary)

	// The lexical embedder's vectors are never computed or stored
	// (embed.IsLexical): retrieval does not search them.
	require.NoError(t, s.mem.Flush(ctx))
	insights, err := s.st.ListInsights(ctx, "u1", store.InsightFilter{})
	require.NoError(t, err)
	require.NotEmpty(t, insights, "the session's reflection")
	for _, in := range insights {
		assert.Nil(t, in.InsightVector, in.InsightText)
	}
	for _, d := range docs {
		assert.Nil(t, d.ContentVector)
		assert.Nil(t, d.SummaryVector)
	}
	assert.Nil(t, res.Session.SummaryVector)

	next, err := s.a.NewUserSession("u1")
	require.NoError(t, err)
	resp, err := s.a.Run(ctx, next, agent.UserText("What did we discuss about my 401k?"))
	require.NoError(t, err)
	assert.Contains(t, resp.Text(), "From memory", "the offline client answered from the injected memory")
	m, ok := s.mem.LastManifest(next)
	require.True(t, ok)
	require.NotEmpty(t, m.Items)
	assert.Equal(t, "session_summary", m.Items[0].Kind)
	assert.Equal(t, sess.ID(), m.Items[0].ID)
}

func TestCrashAfterTurnThirteenResumes(t *testing.T) {
	ctx := context.Background()
	path := sqlitetest.NewFile(t)
	first := openOffline(t, path, nil)
	sess, err := first.a.NewUserSession("u1")
	require.NoError(t, err)
	say(t, first, sess, 1, 13)
	// Abrupt stop: no Flush, no Close. The store goes away under the provider.
	require.NoError(t, first.st.Close())

	// The session survives the restart (its JSON) and so does its memory.
	blob, err := sess.MarshalJSON()
	require.NoError(t, err)
	var resumed agent.Session
	require.NoError(t, resumed.UnmarshalJSON(blob))

	second := openOffline(t, path, nil)
	require.NoError(t, second.mem.StartSession(ctx, &resumed))
	require.NoError(t, second.mem.Flush(ctx)) // a resumed session with a full chunk is pruned
	turns, err := second.st.ListTurns(ctx, "u1", sess.ID(), 0)
	require.NoError(t, err)
	require.Len(t, turns, 13, "every acknowledged turn survived")
	assert.Equal(t, 13, turns[12].Seq)
	got, err := second.st.GetSession(ctx, "u1", sess.ID())
	require.NoError(t, err)
	assert.Equal(t, 10, got.State.PrunedThrough, "turns 11-13 await the next chunk")

	say(t, second, &resumed, 14, 20)
	require.NoError(t, second.mem.Flush(ctx))
	docs, err := second.st.ListInteractions(ctx, "u1", store.InteractionFilter{SessionID: sess.ID()})
	require.NoError(t, err)
	require.Len(t, docs, 2, "no turn lost, no document duplicated")
	assert.Equal(t, [2]int{1, 10}, [2]int{docs[0].FirstTurn, docs[0].LastTurn})
	assert.Equal(t, [2]int{11, 20}, [2]int{docs[1].FirstTurn, docs[1].LastTurn})
	assert.True(t, strings.HasPrefix(docs[1].Content, "user: 11."), docs[1].Content)
}

func TestFailingStoreNeverBreaksTheRun(t *testing.T) {
	ctx := context.Background()
	s := openOffline(t, sqlitetest.NewFile(t), nil)
	sess, err := s.a.NewUserSession("u1")
	require.NoError(t, err)
	say(t, s, sess, 1, 2)
	require.NoError(t, s.st.Close()) // the store fails from now on

	resp, err := s.a.Run(ctx, sess, agent.UserText("Are you still there?"))
	require.NoError(t, err, "memory failures are logged, the run goes on")
	assert.NotEmpty(t, resp.Text())
	assert.Contains(t, s.logs.String(), "store: closed")
}

func TestUsersAreIsolated(t *testing.T) {
	ctx := context.Background()
	st := mem.New(mem.Config{Dimensions: 384})
	client, err := offline.New(offline.Config{})
	require.NoError(t, err)
	emb, err := lexical.New(lexical.Config{})
	require.NoError(t, err)
	p, err := provider.New(st, provider.Config{Chat: client, Embedder: emb})
	require.NoError(t, err)
	a := agent.New(client, agent.Config{ContextProviders: []agent.ContextProvider{p}})

	alice, err := a.NewUserSession("alice")
	require.NoError(t, err)
	_, err = a.Run(ctx, alice, agent.UserText("My secret savings goal is $1,000,000."))
	require.NoError(t, err)
	_, err = p.EndSession(ctx, alice)
	require.NoError(t, err)

	bob, err := a.NewUserSession("bob")
	require.NoError(t, err)
	_, err = a.Run(ctx, bob, agent.UserText("What is my savings goal?"))
	require.NoError(t, err)
	m, ok := p.LastManifest(bob)
	require.True(t, ok)
	assert.Empty(t, m.Items, "nothing of alice's reaches bob's first context")
	_, err = a.Run(ctx, bob, agent.UserText("And my age?"))
	require.NoError(t, err)
	m, _ = p.LastManifest(bob)
	require.Len(t, m.Items, 1)
	assert.Equal(t, "turn", m.Items[0].Kind)
	assert.True(t, strings.HasPrefix(m.Items[0].ID, bob.Messages()[0].ID), "bob's own turn only")

	// A session with no user and no default user gets no memory, logged, and still runs.
	anon := a.NewSession()
	_, err = a.Run(ctx, anon, agent.UserText("hello"))
	require.NoError(t, err)
	_, ok = p.LastManifest(anon)
	assert.False(t, ok)

	// Bob cannot end Alice's session by naming its id.
	stolen, err := agent.NewSession(alice.ID(), "bob")
	require.NoError(t, err)
	_, err = p.EndSession(ctx, stolen)
	require.NoError(t, err, "bob gets a session of his own with that id")
	turns, err := st.ListTurns(ctx, "alice", alice.ID(), 0)
	require.NoError(t, err)
	assert.Len(t, turns, 1)
}

func TestPerRunAndIdleModes(t *testing.T) {
	ctx := context.Background()
	perRun := openOffline(t, sqlitetest.NewFile(t), func(c *provider.Config) { c.Mode = provider.ModePerRun })
	sess, err := perRun.a.NewUserSession("u1")
	require.NoError(t, err)
	say(t, perRun, sess, 1, 3)
	require.NoError(t, perRun.mem.Flush(ctx))
	done, err := perRun.st.ListSessions(ctx, "u1", store.SessionFilter{Status: store.SessionCompleted})
	require.NoError(t, err)
	assert.Len(t, done, 3, "one completed memory session per run")

	idle := openOffline(t, sqlitetest.NewFile(t), func(c *provider.Config) {
		c.Mode = provider.ModeIdle
		// Long enough that no run here idles out halfway, even under -race
		// on a loaded machine; short enough to wait for.
		c.IdleTimeout = 500 * time.Millisecond
	})
	sess, err = idle.a.NewUserSession("u1")
	require.NoError(t, err)
	say(t, idle, sess, 1, 2)
	require.Eventually(t, func() bool {
		got, err := idle.st.GetSession(ctx, "u1", sess.ID())
		return err == nil && got.Status == store.SessionCompleted
	}, 5*time.Second, 10*time.Millisecond, "the idle session ended by itself")
	require.NoError(t, idle.mem.Flush(ctx)) // the end's job is done

	// The agent session goes on after its idle end: the next run is kept,
	// in a new memory session that begins with the ended one's summary.
	rec := &lastRequest{ChatClient: idle.chat}
	again := agent.New(rec, agent.Config{ContextProviders: []agent.ContextProvider{idle.mem}})
	_, err = again.Run(ctx, sess, agent.UserText("I also hold $3,000 in a savings account."))
	require.NoError(t, err)
	require.NoError(t, idle.mem.Flush(ctx))
	all, err := idle.st.ListSessions(ctx, "u1", store.SessionFilter{})
	require.NoError(t, err)
	// A second memory session, or a third when the second idled out
	// during this slow run too (its turn then goes to the next).
	require.GreaterOrEqual(t, len(all), 2, "a new memory session")
	var block string
	for _, m := range rec.req.Messages {
		if strings.HasPrefix(m.Text, "<memory>") {
			block = m.Text
		}
	}
	assert.Contains(t, block, "Recent Session Summaries", "the new session starts with the ended one's summary")
	var kept int
	for _, d := range all {
		turns, err := idle.st.ListTurns(ctx, "u1", d.ID, 0)
		require.NoError(t, err)
		for _, tr := range turns {
			if strings.Contains(tr.Messages[0].Content, "$3,000") {
				kept++
			}
		}
	}
	assert.Equal(t, 1, kept, "the run after the idle end is kept")
}

func TestConfigValidation(t *testing.T) {
	st := mem.New(mem.Config{})
	emb, err := lexical.New(lexical.Config{})
	require.NoError(t, err)
	client, err := offline.New(offline.Config{})
	require.NoError(t, err)
	for name, cfg := range map[string]provider.Config{
		"no model":    {Embedder: emb},
		"no embedder": {Chat: client},
		"bad user":    {Chat: client, Embedder: emb, UserID: "a/b"},
		"bad mode":    {Chat: client, Embedder: emb, Mode: 7},
		"negative":    {Chat: client, Embedder: emb, Workers: -1},
		"negative K":  {Chat: client, Embedder: emb, KeeperConfig: keeper.Config{K: -2}},
	} {
		_, err := provider.New(st, cfg)
		assert.Error(t, err, name)
	}
}

func TestRecordImportsAConversation(t *testing.T) {
	ctx := context.Background()
	s := openOffline(t, sqlitetest.NewFile(t), func(c *provider.Config) { c.KeeperConfig.K = 2 })
	sess, err := agent.NewSession("import-1", "u1")
	require.NoError(t, err)
	day := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
	lines := []struct{ who, text string }{{"Caroline", "I went to a support group yesterday."}, {"Melanie", "That sounds lovely!"}, {"Caroline", "I also started painting."}}
	for i, l := range lines {
		role := agent.RoleUser
		if l.who == "Melanie" {
			role = agent.RoleAssistant
		}
		require.NoError(t, s.mem.Record(ctx, sess, agent.Message{ID: fmt.Sprintf("D1:%d", i+1), Role: role, Name: l.who, Text: l.text, CreatedAt: day}))
	}
	require.NoError(t, s.mem.Flush(ctx))
	docs, err := s.st.ListInteractions(ctx, "u1", store.InteractionFilter{SessionID: "import-1"})
	require.NoError(t, err)
	require.Len(t, docs, 1)
	assert.Equal(t, []string{"D1:1", "D1:2"}, docs[0].TurnIDs)
	assert.Equal(t, "Caroline: I went to a support group yesterday.\nMelanie: That sounds lovely!", docs[0].Content)
	assert.True(t, docs[0].Timestamp.Equal(day), "the turn keeps the conversation's date")

	assert.Error(t, s.mem.Record(ctx, sess), "no messages")
	assert.Error(t, s.mem.Record(ctx, sess, agent.SystemText("x")), "only user and assistant turns")
}

// A caller that stores turns itself, in a batch with writes of its own,
// gets them from Turn as Record would store them and tells the provider
// with Recorded: the session prunes them as it prunes turns Record
// stores, and a repeated turn is not stored twice.
func TestTurnsStoredByTheCallerArePrunedAsRecordedOnes(t *testing.T) {
	ctx := context.Background()
	s := openOffline(t, sqlitetest.NewFile(t), func(c *provider.Config) { c.KeeperConfig.K = 2 })
	sess, err := agent.NewSession("import-2", "u1")
	require.NoError(t, err)
	day := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
	var stored []store.Turn
	for i, text := range []string{"I went to a support group yesterday.", "I also started painting.", "I also started painting."} {
		id := fmt.Sprintf("D1:%d", min(i+1, 2))
		tr, err := s.mem.Turn(sess, agent.Message{ID: id, Role: agent.RoleUser, Text: text, CreatedAt: day})
		require.NoError(t, err)
		assert.Equal(t, "import-2", tr.SessionID)
		assert.Equal(t, "u1", tr.UserID)
		require.NoError(t, store.WriteRecords(ctx, store.RecordsOf(s.st), []store.RecordWrite{{UserID: "u1", Append: &tr}}))
		stored = append(stored, tr)
		require.NoError(t, s.mem.Recorded(ctx, sess, tr))
	}
	assert.Equal(t, stored[1].Seq, stored[2].Seq, "the same message is one turn")
	require.NoError(t, s.mem.Flush(ctx))
	docs, err := s.st.ListInteractions(ctx, "u1", store.InteractionFilter{SessionID: "import-2"})
	require.NoError(t, err)
	require.Len(t, docs, 1, "two turns of K=2: pruned")
	assert.Equal(t, []string{"D1:1", "D1:2"}, docs[0].TurnIDs)
	assert.True(t, docs[0].Timestamp.Equal(day))

	_, err = s.mem.Turn(sess)
	assert.Error(t, err, "no messages")
	_, err = s.mem.Turn(sess, agent.SystemText("x"))
	assert.Error(t, err, "only user and assistant turns")
}

func TestRetrievalModesOffline(t *testing.T) {
	ctx := context.Background()
	path := sqlitetest.NewFile(t)
	// Session one, remembered by every mode below.
	first := openOffline(t, path, nil)
	sess, err := first.a.NewUserSession("u1")
	require.NoError(t, err)
	for _, q := range []string{"My old 401k from Acme holds $40,000.", "I can save $500 a month.", "I worry about market volatility."} {
		_, err := first.a.Run(ctx, sess, agent.UserText(q))
		require.NoError(t, err)
	}
	_, err = first.mem.EndSession(ctx, sess)
	require.NoError(t, err)
	require.NoError(t, first.st.Close())

	t.Run("auto injects memories for a question, not for thanks", func(t *testing.T) {
		s := openOffline(t, path, func(c *provider.Config) {
			c.Retrieval = provider.RetrievalAuto
			c.RetrievalConfig.MinSimilarity = -1
		})
		next, err := s.a.NewUserSession("u1")
		require.NoError(t, err)
		resp, err := s.a.Run(ctx, next, agent.UserText("How much did I say I could save each month?"))
		require.NoError(t, err)
		assert.Contains(t, resp.Text(), "$500")
		m, _ := s.mem.LastManifest(next)
		var kinds []string
		for _, it := range m.Items {
			kinds = append(kinds, it.Kind)
		}
		assert.Contains(t, kinds, "retrieved_interactions")
		assert.Empty(t, resp.Messages[0].ToolCalls, "auto mode offers no tool")

		_, err = s.a.Run(ctx, next, agent.UserText("Thanks!"))
		require.NoError(t, err)
		m, _ = s.mem.LastManifest(next)
		for _, it := range m.Items {
			assert.NotContains(t, it.Kind, "retrieved", "a thank-you searches nothing")
		}
	})

	t.Run("on demand: the model calls retrieve_user_facts", func(t *testing.T) {
		s := openOffline(t, path, nil)
		next, err := s.a.NewUserSession("u1")
		require.NoError(t, err)
		resp, err := s.a.Run(ctx, next, agent.UserText("What did I tell you about my Acme 401k?"))
		require.NoError(t, err)
		require.NotEmpty(t, resp.Messages[0].ToolCalls)
		assert.Equal(t, "retrieve_user_facts", resp.Messages[0].ToolCalls[0].Name)
		assert.Contains(t, resp.Messages[1].Text, "$40,000", "the tool found the stored conversation")
		assert.Contains(t, resp.Text(), "$40,000")
	})

	t.Run("off: neither tool nor search", func(t *testing.T) {
		s := openOffline(t, path, func(c *provider.Config) { c.Retrieval = provider.RetrievalOff })
		next, err := s.a.NewUserSession("u1")
		require.NoError(t, err)
		resp, err := s.a.Run(ctx, next, agent.UserText("What did I tell you about my Acme 401k?"))
		require.NoError(t, err)
		assert.Empty(t, resp.Messages[0].ToolCalls)
	})
}

func TestSessionsThatGiveWayResume(t *testing.T) {
	ctx := context.Background()
	s := openOffline(t, sqlitetest.NewFile(t), func(c *provider.Config) { c.MaxLive = 1; c.KeeperConfig.K = 3 })
	a, err := s.a.NewUserSession("u1")
	require.NoError(t, err)
	b, err := s.a.NewUserSession("u2")
	require.NoError(t, err)
	for i := 1; i <= 4; i++ { // a and b take turns pushing each other out of memory
		_, err := s.a.Run(ctx, a, agent.UserText(fmt.Sprintf("a says %d", i)))
		require.NoError(t, err)
		_, err = s.a.Run(ctx, b, agent.UserText(fmt.Sprintf("b says %d", i)))
		require.NoError(t, err)
	}
	require.NoError(t, s.mem.Flush(ctx))
	for _, c := range []struct {
		user string
		sess *agent.Session
	}{{"u1", a}, {"u2", b}} {
		got, err := s.st.GetSession(ctx, c.user, c.sess.ID())
		require.NoError(t, err)
		turns, err := s.st.ListTurns(ctx, c.user, c.sess.ID(), 0)
		require.NoError(t, err)
		assert.Len(t, turns, 4, c.user)
		assert.Equal(t, 3, got.State.PrunedThrough, c.user)
		_, ok := s.mem.LastManifest(c.sess)
		assert.Equal(t, c.user == "u2", ok, "only the most recent session's manifest is kept with MaxLive 1")
	}
}

func TestTwoUsersWithTheSameSessionID(t *testing.T) {
	ctx := context.Background()
	s := openOffline(t, sqlitetest.NewFile(t), nil)
	alice, err := agent.NewSession("shared-id", "alice")
	require.NoError(t, err)
	bob, err := agent.NewSession("shared-id", "bob")
	require.NoError(t, err)
	_, err = s.a.Run(ctx, alice, agent.UserText("Alice's secret is her Acme 401k."))
	require.NoError(t, err)
	_, err = s.a.Run(ctx, bob, agent.UserText("Bob likes bonds."))
	require.NoError(t, err)
	_, err = s.a.Run(ctx, bob, agent.UserText("What do I like?"))
	require.NoError(t, err)
	for user, want := range map[string]int{"alice": 1, "bob": 2} {
		turns, err := s.st.ListTurns(ctx, user, "shared-id", 0)
		require.NoError(t, err)
		assert.Len(t, turns, want, user)
		for _, tr := range turns {
			assert.NotContains(t, tr.Messages[0].Content, map[string]string{"alice": "Bob", "bob": "Alice"}[user])
		}
	}
	m, _ := s.mem.LastManifest(bob)
	for _, it := range m.Items {
		assert.NotContains(t, it.ID, alice.Messages()[0].ID, "bob's context never holds alice's turn")
	}
}

// The keeper's configuration is nested, and what it sets reaches the
// keeper: here its token budget, in every manifest, while its models and
// embedder come from the provider's.
func TestKeeperConfigReachesTheKeeper(t *testing.T) {
	for _, c := range []struct {
		budget, want int
	}{{0, keeper.DefaultTokenBudget}, {300, 300}} {
		s := openOffline(t, sqlitetest.NewFile(t), func(cfg *provider.Config) { cfg.KeeperConfig.TokenBudget = c.budget })
		sess, err := s.a.NewUserSession("u1")
		require.NoError(t, err)
		say(t, s, sess, 0, 1)
		m, ok := s.mem.LastManifest(sess)
		require.True(t, ok)
		assert.Equal(t, c.want, m.Budget, "KeeperConfig.TokenBudget %d", c.budget)
	}
}
