package provider_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/internal/longtest"
	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/keeper"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/reflection"
	"github.com/agentmemory/agentmemory/store"
)

// cancelOnAnswer is the caller giving up at the worst moment: the model's
// final answer has arrived, and the caller's context is cancelled before the
// providers' Invoked hooks run.
type cancelOnAnswer struct {
	agent.ChatClient
	cancel context.CancelFunc
}

func (c cancelOnAnswer) Complete(ctx context.Context, req *agent.ChatRequest) (*agent.ChatResponse, error) {
	resp, err := c.ChatClient.Complete(ctx, req)
	if err == nil && len(resp.Message.ToolCalls) == 0 {
		c.cancel() // the final answer is in hand
	}
	return resp, err
}

func TestTurnKeptWhenTheCallerCancelsAfterTheAnswer(t *testing.T) {
	s := openOffline(t, sqlitetest.NewFile(t), nil)
	sess, err := s.a.NewUserSession("u1")
	require.NoError(t, err)
	for i := range 5 {
		ctx, cancel := context.WithCancel(context.Background())
		a := agent.New(cancelOnAnswer{ChatClient: s.chat, cancel: cancel}, agent.Config{ContextProviders: []agent.ContextProvider{s.mem}})
		_, err = a.Run(ctx, sess, agent.UserText(fmt.Sprintf("My goal number %d is to save more.", i)))
		require.NoError(t, err, "the run succeeded")
		require.Error(t, ctx.Err(), "the caller's context was cancelled before Invoked")
	}
	turns, err := s.st.ListTurns(context.Background(), "u1", sess.ID(), 0)
	require.NoError(t, err)
	assert.Len(t, turns, 5, "every acknowledged turn is kept")
}

func TestRunRefusesOversizedInputBeforeAnyModelCall(t *testing.T) {
	f := newFixture(t)
	sess, err := f.agent.NewUserSession("u1")
	require.NoError(t, err)
	before := len(f.srv.ChatRequests())
	_, err = f.agent.Run(context.Background(), sess, agent.UserText(strings.Repeat("x", 10<<20)))
	require.ErrorIs(t, err, agent.ErrInputTooLarge)
	assert.Contains(t, err.Error(), "10485760 bytes of input, at most 1048576")
	assert.Equal(t, before, len(f.srv.ChatRequests()), "no model call")
}

func TestBigMessagesAndToolArgumentsAreKeptCutNeverDropped(t *testing.T) {
	t.Parallel() // its own fixture
	ctx := context.Background()
	// Pasted documents of 120 KB each, more than the K turns the keeper
	// holds so that pruning during the runs takes documents (3 with K = 2;
	// 10 with K = 4 in the long mode): every one kept whole. Each run sends
	// the model its K last turns, so K sets most of the test's work.
	k, docs := longtest.Pick(t, 2, 4), longtest.Pick(t, 3, 10)
	f := newFixture(t, func(c *provider.Config) { c.KeeperConfig.K = k })
	sess := f.startSession(t)
	for i := range docs {
		doc := fmt.Sprintf("document %d: ", i) + strings.Repeat("quarterly statement line. ", 120_000/26)
		_, err := f.agent.Run(ctx, sess, agent.UserText(doc))
		require.NoError(t, err)
	}
	// A 900 KB message: accepted by Run, kept cut with a marker.
	_, err := f.agent.Run(ctx, sess, agent.UserText(strings.Repeat("y", 900_000)))
	require.NoError(t, err)
	// Tool-call arguments beyond a store document (1.5 MB, or 5 MB in the
	// long mode): the turn is kept, the arguments cut.
	argBytes := longtest.Pick(t, 1_500_000, 5<<20)
	calls := 0
	f.scriptMain(func(fakeopenai.Request) fakeopenai.Reply {
		calls++
		if calls == 1 {
			return fakeopenai.ToolCalls(fakeopenai.Call("c1", "retrieve_user_facts", `{"query":"`+strings.Repeat("z", argBytes)+`"}`))
		}
		return fakeopenai.Text("done")
	})
	_, err = f.agent.Run(ctx, sess, agent.UserText("Look this up."))
	require.NoError(t, err)

	turns, err := f.st.ListTurns(ctx, "u1", sess.ID(), 0)
	require.NoError(t, err)
	require.Len(t, turns, docs+2, "no turn lost")
	for i := range docs {
		assert.Zero(t, turns[i].Messages[0].OriginalBytes, "turn %d kept whole", i+1)
		assert.Greater(t, len(turns[i].Messages[0].Content), 119_000)
	}
	big := turns[docs].Messages[0]
	assert.Equal(t, 900_000, big.OriginalBytes)
	assert.LessOrEqual(t, len(big.Content), keeper.MaxMessageBytes)
	assert.Contains(t, big.Content, "[…cut: 900000 bytes in all]")
	var tools []map[string]any
	require.NoError(t, json.Unmarshal([]byte(turns[docs+1].Metadata["tools"]), &tools))
	require.Len(t, tools, 1)
	args, ok := tools[0]["arguments"].(string)
	require.True(t, ok, "cut arguments are kept as a JSON string")
	assert.Contains(t, args, "bytes in all]")

	// Pruning such turns works: interactions stay within a document.
	res, err := f.mem.EndSession(ctx, sess)
	require.NoError(t, err)
	for _, p := range res.Pruned {
		assert.LessOrEqual(t, len(p.Interaction.Content), keeper.MaxInteractionContentBytes)
	}
	assertEachTurnOnce(t, f.st, "u1", sess.ID(), docs+2)
}

// assertEachTurnOnce checks that the session's n turns are each in exactly
// one interaction document.
func assertEachTurnOnce(t *testing.T, st store.Store, user, session string, n int) {
	t.Helper()
	docs, err := st.ListInteractions(context.Background(), user, store.InteractionFilter{SessionID: session})
	require.NoError(t, err)
	covered := make(map[int]int)
	for _, d := range docs {
		for seq := d.FirstTurn; seq <= d.LastTurn; seq++ {
			covered[seq]++
		}
	}
	for seq := 1; seq <= n; seq++ {
		assert.Equal(t, 1, covered[seq], "turn %d is in exactly one interaction", seq)
	}
	assert.Len(t, covered, n, "no interaction covers a turn that does not exist")
}

// A mini model that keeps failing (an error, an empty answer, 3 MB of
// text) never wedges a session: every turn is pruned, flagged where the
// model gave nothing, and EndSession ends it.
func TestFailingMemoryModelNeverWedgesTheSession(t *testing.T) {
	t.Parallel() // its own fixtures; most of its time is the retries' backoff
	// Beyond a store document (store.MaxDocumentBytes): 1.2 MB, or 3 MB
	// in the long mode.
	huge := strings.Repeat("blah ", longtest.Pick(t, 240_000, 600_000))
	// Seven turns with K = 3 make two prunes during the runs and one at
	// the end; the huge answers, each parsed by the SDK, make do with four
	// turns (one prune during the runs, one at the end) but in the long
	// mode.
	for name, c := range map[string]struct {
		bad   func() fakeopenai.Reply
		turns int
	}{
		"error": {func() fakeopenai.Reply { return fakeopenai.Error(503, "overloaded") }, 7},
		"empty": {func() fakeopenai.Reply { return fakeopenai.Text("") }, 7},
		"huge":  {func() fakeopenai.Reply { return fakeopenai.Text(huge) }, longtest.Pick(t, 4, 7)},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFixture(t, func(c *provider.Config) {
				c.KeeperConfig.K = 3
				c.MaxAttempts = 2
				c.Reflection = provider.ReflectManual
			})
			f.srv.HandleChat(func(r fakeopenai.Request) fakeopenai.Reply {
				if strings.HasPrefix(r.SystemText(), "agentmemory:prompt=") {
					return c.bad()
				}
				return fakeopenai.Text("noted")
			})
			sess, err := f.agent.NewUserSession("u1")
			require.NoError(t, err)
			for i := range c.turns {
				_, err := f.agent.Run(ctx, sess, agent.UserText(fmt.Sprintf("Fact number %d about my savings.", i+1)))
				require.NoError(t, err)
			}
			require.NoError(t, f.mem.Flush(ctx))
			res, err := f.mem.EndSession(ctx, sess)
			require.NoError(t, err, "EndSession ends the session whatever the model does")
			assert.Equal(t, store.SessionCompleted, res.Session.Status)
			assertEachTurnOnce(t, f.st, "u1", sess.ID(), c.turns)
			docs, err := f.st.ListInteractions(ctx, "u1", store.InteractionFilter{SessionID: sess.ID(), MetadataPending: true})
			require.NoError(t, err)
			assert.NotEmpty(t, docs, "what the model did not give is flagged for later")
			assert.True(t, res.Session.SummaryPending, "the summary is owed")

			// The model is back: the next session's end completes the owed summary.
			f.srv.HandleChat(f.model.answer)
			require.NoError(t, f.mem.Flush(ctx))
			f.session(t, "u1", 1)
			doc, err := f.st.GetSession(ctx, "u1", sess.ID())
			require.NoError(t, err)
			assert.False(t, doc.SummaryPending)
			assert.Equal(t, "Planned a 401k rollover and retirement savings.", doc.Summary)
		})
	}
}

// Four providers (four processes, say) on one store write one session at
// once: no turn is lost, and once the session ends each is in exactly one
// interaction.
func TestConcurrentProvidersOnOneSession(t *testing.T) {
	ctx := context.Background()
	path := sqlitetest.NewFile(t)
	const writers, each = 4, 40
	stacks := make([]*offlineStack, writers)
	for i := range stacks {
		stacks[i] = openOffline(t, path, func(c *provider.Config) { c.Reflection = provider.ReflectManual })
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w, s := range stacks {
		wg.Go(func() {
			sess, err := agent.NewSession("shared", "u1")
			if err != nil {
				errs <- err
				return
			}
			for i := range each {
				if err := s.mem.Record(ctx, sess, agent.UserText(fmt.Sprintf("writer %d says %d", w, i))); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, s := range stacks {
		require.NoError(t, s.mem.Flush(ctx))
	}
	turns, err := stacks[0].st.ListTurns(ctx, "u1", "shared", 0)
	require.NoError(t, err)
	require.Len(t, turns, writers*each, "no turn lost")
	sess, err := agent.NewSession("shared", "u1")
	require.NoError(t, err)
	_, err = stacks[1].mem.EndSession(ctx, sess)
	require.NoError(t, err)
	assertEachTurnOnce(t, stacks[0].st, "u1", "shared", writers*each)
}

// One provider recording into one session from several goroutines at
// once, its background prunes running meanwhile, loses no turn either.
func TestConcurrentRecordsOnOneSession(t *testing.T) {
	ctx := context.Background()
	const writers, each = 4, 40
	s := openOffline(t, sqlitetest.NewFile(t), func(c *provider.Config) { c.Reflection = provider.ReflectManual })
	sess, err := agent.NewSession("shared", "u1")
	require.NoError(t, err)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				assert.NoError(t, s.mem.Record(ctx, sess, agent.UserText(fmt.Sprintf("writer %d says %d", w, i))))
			}
		})
	}
	wg.Wait()
	require.NoError(t, s.mem.Flush(ctx))
	_, err = s.mem.EndSession(ctx, sess)
	require.NoError(t, err)
	assertEachTurnOnce(t, s.st, "u1", "shared", writers*each)
}

// The reflection counts live in the store: a restart between two fruitful
// reflections still reconciles and updates the profile on the second.
func TestReflectionCountsSurviveARestart(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, func(c *provider.Config) { c.ReconcileEvery, c.ProfileEvery = 2, 2 })
	f.session(t, "u1", 3)
	st, err := f.st.GetUserState(ctx, "u1")
	require.NoError(t, err)
	assert.Equal(t, 1, st.SinceReconcile)
	assert.Equal(t, 1, st.SinceProfile)
	require.NoError(t, f.mem.Close(ctx))

	// A new process on the same store.
	restarted, err := provider.New(f.st, f.cfg)
	require.NoError(t, err)
	defer restarted.Close(ctx)
	f.mem = restarted
	f.agent = agent.New(f.cfg.Chat, agent.Config{ContextProviders: []agent.ContextProvider{restarted}})
	f.session(t, "u1", 2)
	assert.Len(t, f.requestsFor("reconcile"), 1, "the second fruitful reflection reconciles, across the restart")
	assert.Len(t, f.requestsFor("profile_synthesis"), 1)
	st, err = f.st.GetUserState(ctx, "u1")
	require.NoError(t, err)
	assert.Zero(t, st.SinceReconcile)
	assert.Zero(t, st.SinceProfile)
	assert.Empty(t, st.LeaseOwner, "the lease was given back")
}

// Two processes reflecting one user at once never interleave: the model
// sees one of the user's reflection prompts at a time.
func TestTwoProcessesReflectOneUserInTurn(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, func(c *provider.Config) { c.Reflection = provider.ReflectManual })
	var (
		mu             sync.Mutex
		inFlight, most int
	)
	f.srv.HandleChat(func(r fakeopenai.Request) fakeopenai.Reply {
		sys := r.SystemText()
		if strings.HasPrefix(sys, "agentmemory:prompt=session_reflection") || strings.HasPrefix(sys, "agentmemory:prompt=profile_synthesis") {
			mu.Lock()
			inFlight++
			most = max(most, inFlight)
			mu.Unlock()
			defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
			time.Sleep(20 * time.Millisecond)
		}
		return f.model.answer(r)
	})
	for range 4 {
		f.session(t, "u1", 2)
	}
	other, err := provider.New(f.st, f.cfg)
	require.NoError(t, err)
	defer other.Close(ctx)

	var wg sync.WaitGroup
	for _, r := range []*reflection.Reflector{f.mem.Reflector(), other.Reflector()} {
		wg.Go(func() {
			_, err := r.ReflectPending(ctx, "u1")
			assert.NoError(t, err)
			_, err = r.ReflectLongTerm(ctx, "u1")
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	assert.Equal(t, 1, most, "one reflection call for the user at a time, across processes")
	ins, err := f.st.ListInsights(ctx, "u1", store.InsightFilter{Type: store.InsightSession})
	require.NoError(t, err)
	assert.Len(t, ins, 4, "each session reflected once")
}

// In ModePerRun a session id of the longest valid length still gets its
// memory: the per-run id stays a valid id.
func TestPerRunModeWithTheLongestSessionID(t *testing.T) {
	ctx := context.Background()
	s := openOffline(t, sqlitetest.NewFile(t), func(c *provider.Config) { c.Mode = provider.ModePerRun })
	sess, err := agent.NewSession(strings.Repeat("s", store.MaxIDBytes), "u1")
	require.NoError(t, err)
	_, err = s.a.Run(ctx, sess, agent.UserText("I keep $10,000 in emergency savings."))
	require.NoError(t, err)
	require.NoError(t, s.mem.Flush(ctx))
	done, err := s.st.ListSessions(ctx, "u1", store.SessionFilter{Status: store.SessionCompleted})
	require.NoError(t, err)
	require.Len(t, done, 1, "the run had its memory session, ended after the run")
	turns, err := s.st.ListTurns(ctx, "u1", done[0].ID, 0)
	require.NoError(t, err)
	assert.Len(t, turns, 1)
	assert.NotContains(t, s.logs.String(), "level=WARN")
}
