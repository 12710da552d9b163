package gateway_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/gateway"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/store"
)

func TestSessionsBeyondMaxSessionsAreEnded(t *testing.T) {
	t.Parallel()
	r := newRig(t, func(c *gateway.Config) { c.MaxSessions = 1 })
	r.ask("alice", "first", "I started learning Portuguese.", fakeopenai.Text("Boa sorte!"))
	r.ask("alice", "second", "I also started learning the cello.", fakeopenai.Text("Lovely."))
	require.Eventually(t, func() bool {
		require.NoError(t, r.gw.Flush(context.Background()))
		d, err := r.st.GetSession(context.Background(), r.mem.UserID("alice"), "first")
		return err == nil && d.Status == store.SessionCompleted
	}, 5*time.Second, 20*time.Millisecond, "the least recently used session is ended")
	d, err := r.st.GetSession(context.Background(), r.mem.UserID("alice"), "second")
	require.NoError(t, err)
	assert.Equal(t, store.SessionActive, d.Status)
}

func TestTheMemoryStoresTTLHoldsAtTheGateway(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	status, _, b := r.do(http.MethodPost, "/memory_stores", nil, map[string]any{"name": "shortlived",
		"definition": map[string]any{"kind": "default", "chat_model": "offline", "embedding_model": "lexical",
			"options": map[string]any{"default_ttl_seconds": 1}}})
	require.Equal(t, http.StatusOK, status, string(b))
	mem, err := r.svc.GatewayStore(context.Background(), "shortlived", "unused", "unused")
	require.NoError(t, err)
	gw, err := gateway.New(context.Background(), gateway.Config{Memory: mem, IdleTimeout: 50 * time.Millisecond,
		Upstream: gateway.Upstream{BaseURL: r.up.URL()}, Logger: quiet()})
	require.NoError(t, err)
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { _ = gw.Close(context.Background()) })
	ask := func(text string) fakeopenai.Request {
		t.Helper()
		r.up.QueueChat(fakeopenai.Text("ok"))
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions",
			strings.NewReader(`{"model":"m","messages":[{"role":"user","content":`+quote(text)+`}]}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(gateway.UserHeader, "alice")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		reqs := r.up.ChatRequests()
		return reqs[len(reqs)-1]
	}
	ask("My dog's name is Biscuit and he is a beagle.")
	require.Eventually(t, func() bool {
		require.NoError(t, gw.Flush(context.Background()))
		ms, err := mem.Memories(context.Background(), "alice")
		require.NoError(t, err)
		return len(ms) > 0
	}, 5*time.Second, 20*time.Millisecond)
	fresh := ask("What is the name of my dog?")
	assert.Contains(t, fresh.Chat.Messages[0].Content, "Biscuit", "within the TTL")

	// A memory expires a TTL after it was last written, and background
	// work (a session's end, its reflection) writes too: the sessions end
	// and their work is done before the TTL is waited for.
	require.Eventually(t, func() bool {
		require.NoError(t, gw.Flush(context.Background()))
		ss, err := r.st.ListSessions(context.Background(), mem.UserID("alice"), store.SessionFilter{})
		require.NoError(t, err)
		for _, s := range ss {
			if s.Status != store.SessionCompleted {
				return false
			}
		}
		return len(ss) >= 2 // the fact's, and the fresh question's
	}, 5*time.Second, 20*time.Millisecond)
	require.NoError(t, gw.Flush(context.Background()))
	time.Sleep(1100 * time.Millisecond)
	stale := ask("What is the name of my dog?")
	for _, m := range stale.Chat.Messages {
		assert.NotContains(t, m.Content, "Biscuit", "past the TTL")
	}
}

// A session's idle time counts from its last answer: one ended while a
// slow answer was on its way would leave the turn in a session nobody
// ends. The store's idle check (provider.EndSessionIfIdle) sees only the
// turns recorded, so an answer that records nothing (auto_store false)
// holds the session open by the gateway's timer alone: counted from the
// request's start, the session would end as soon as a slow answer is
// written, not IdleTimeout after it.
func TestIdleTimeCountsFromTheLastAnswer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const idle, delay = 200 * time.Millisecond, 150 * time.Millisecond
	r := newRig(t, func(c *gateway.Config) { c.IdleTimeout = idle })
	r.ask("alice", "s1", "I am moving to Porto next month.", fakeopenai.Text("Exciting!").WithDelay(delay))

	r.up.QueueChat(fakeopenai.Text("Noted.").WithDelay(delay))
	start := time.Now()
	_, err := r.chat("alice").New(ctx, openai.ChatCompletionNewParams{
		Model: "gpt-test", Messages: []openai.ChatCompletionMessageParamUnion{userMessage("Just thinking aloud.")},
	}, option.WithHeader(gateway.SessionHeader, "s1"), option.WithJSONSet("memory_config", map[string]any{"auto_store": false}))
	require.NoError(t, err)
	r.endSessions("alice")
	d, err := r.st.GetSession(ctx, r.mem.UserID("alice"), "s1")
	require.NoError(t, err)
	// The answer comes delay after the start at the earliest, and the
	// session is idle for idle after it.
	assert.GreaterOrEqual(t, d.EndTime.Sub(start), delay+idle, "ended IdleTimeout after the last answer, not after its request's start")
	ms, err := r.mem.Memories(ctx, "alice")
	require.NoError(t, err)
	require.NotEmpty(t, ms)
	assert.Contains(t, ms[len(ms)-1].Content, "Porto", "the session holding the turn ended and was summarized")
}

// held makes r's upstream hold each chat request until the returned
// release is called (once is enough; the test's cleanup calls it too, so
// that a failed test does not leave the fake server waiting): entered
// receives once per request, when the request reaches the upstream.
func (r *rig) held(reply fakeopenai.Reply) (entered <-chan struct{}, release func()) {
	in, out := make(chan struct{}, 8), make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(out) }) }
	r.t.Cleanup(release)
	r.up.HandleChat(func(fakeopenai.Request) fakeopenai.Reply {
		in <- struct{}{}
		<-out
		return reply
	})
	return in, release
}

// A request that lasts longer than IdleTimeout keeps its session open:
// the session ends only once idle after the answer, and holds the
// request's turn (ended under the request, it would be summarized
// without the turn, which would go to a session of its own).
func TestASessionDoesNotIdleOutWhileItsRequestIsInFlight(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const idle = 50 * time.Millisecond
	r := newRig(t, func(c *gateway.Config) { c.IdleTimeout = idle })
	entered, release := r.held(fakeopenai.Text("Exciting!"))
	done := make(chan error, 1)
	go func() {
		_, err := r.chat("alice").New(ctx, openai.ChatCompletionNewParams{
			Model: "gpt-test", Messages: []openai.ChatCompletionMessageParamUnion{userMessage("I am moving to Porto next month.")},
		}, option.WithHeader(gateway.SessionHeader, "s1"))
		done <- err
	}()
	<-entered
	// Nothing but time shows an idle end that does not happen: the
	// request is held for several idle times, then the ends under way
	// are waited for.
	time.Sleep(6 * idle)
	require.NoError(t, r.gw.Flush(ctx))
	user := r.mem.UserID("alice")
	d, err := r.st.GetSession(ctx, user, "s1")
	require.NoError(t, err)
	assert.Equal(t, store.SessionActive, d.Status, "not ended while its request is in flight")

	release()
	require.NoError(t, <-done)
	r.endSessions("alice")
	ss, err := r.st.ListSessions(ctx, user, store.SessionFilter{})
	require.NoError(t, err)
	require.Len(t, ss, 1, "one memory session, ended once")
	assert.Equal(t, "s1", ss[0].ID)
	turns, err := r.st.ListTurns(ctx, user, "s1", 0)
	require.NoError(t, err)
	require.Len(t, turns, 1, "the request's turn is in the session")
	assert.Contains(t, turns[0].Messages[0].Content, "Porto")
	d, err = r.st.GetSession(ctx, user, "s1")
	require.NoError(t, err)
	assert.Contains(t, d.Summary, "Porto", "the summary covers the turn")
}

// A Responses chain that goes on after its session idled out goes on in
// the next memory session, which the gateway then keeps the agent session
// under (its entry moves mid-request): the request in flight holds the
// new entry open too, and the next session ends once idle after it, with
// the request's turn.
func TestAChainMovedMidRequestDoesNotIdleOutUnderIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const idle = 50 * time.Millisecond
	r := newRig(t, func(c *gateway.Config) { c.IdleTimeout = idle })
	user := r.mem.UserID("alice")
	r1, _ := r.respond("alice", "", say("I am planning a trip to Lisbon."), fakeopenai.Text("Nice."))
	r.endSessions("alice")

	entered, release := r.held(fakeopenai.Text("Great."))
	done := make(chan error, 1)
	go func() {
		params := say("I booked the flight to Lisbon.")
		params.Model = "gpt-test"
		params.PreviousResponseID = openai.String(r1.ID)
		c := r.client("alice")
		_, err := c.Responses.New(ctx, params)
		done <- err
	}()
	<-entered
	time.Sleep(6 * idle) // as in TestASessionDoesNotIdleOutWhileItsRequestIsInFlight
	require.NoError(t, r.gw.Flush(ctx))
	active, err := r.st.ListSessions(ctx, user, store.SessionFilter{Status: store.SessionActive})
	require.NoError(t, err)
	require.Len(t, active, 1, "the chain's next session is not ended while its request is in flight")
	next := active[0].ID

	release()
	require.NoError(t, <-done)
	r.endSessions("alice")
	ss, err := r.st.ListSessions(ctx, user, store.SessionFilter{})
	require.NoError(t, err)
	assert.Len(t, ss, 2, "the chain's first session and the next, each ended once")
	turns, err := r.st.ListTurns(ctx, user, next, 0)
	require.NoError(t, err)
	require.Len(t, turns, 1, "the request's turn is in the next session")
	assert.Equal(t, "I booked the flight to Lisbon.", turns[0].Messages[0].Content)
}

// heldModel is the memory store's model, holding the first call of one
// prompt (named as prompts.MarkerPrefix names it) until release is
// called: entered is closed when that call comes. The test's cleanup
// releases it before the rig's (registered after the rig), so that a
// failed test does not leave an end held.
type heldModel struct {
	agent.ChatClient
	prompt  string
	entered chan struct{}
	out     chan struct{}
	hold    sync.Once
	release func()
}

func holdFirst(prompt string) *heldModel {
	m := &heldModel{prompt: prompt, entered: make(chan struct{}), out: make(chan struct{})}
	var once sync.Once
	m.release = func() { once.Do(func() { close(m.out) }) }
	return m
}

func (m *heldModel) wrap(c agent.ChatClient) agent.ChatClient { m.ChatClient = c; return m }

func (m *heldModel) Complete(ctx context.Context, req *agent.ChatRequest) (*agent.ChatResponse, error) {
	if len(req.Messages) > 0 {
		first, _, _ := strings.Cut(req.Messages[0].Text, "\n")
		if first == prompts.MarkerPrefix+m.prompt {
			m.hold.Do(func() {
				close(m.entered)
				<-m.out
			})
		}
	}
	return m.ChatClient.Complete(ctx, req)
}

// logSignal is a log sink that closes seen at the first record holding
// text.
type logSignal struct {
	text string
	seen chan struct{}
	once sync.Once
}

func newLogSignal(text string) *logSignal { return &logSignal{text: text, seen: make(chan struct{})} }

func (l *logSignal) Write(p []byte) (int, error) {
	if strings.Contains(string(p), l.text) {
		l.once.Do(func() { close(l.seen) })
	}
	return len(p), nil
}

// A request that comes just after its session's idle timer fired, while
// the end is summarizing the session, waits for the end and goes on in
// the next memory session: recorded in the ending one, its turn would
// miss the summary written from the turns read before it. (The gateway
// logs the wait: it tells the test that the request has come.)
func TestARequestDuringAnIdleEndGoesOnInTheNextSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	model := holdFirst(prompts.NameSessionSummary)
	waiting := newLogSignal("waits for the end of its session")
	r := newRigWithModel(t, model.wrap, func(c *gateway.Config) {
		c.IdleTimeout = 50 * time.Millisecond
		c.Logger = slog.New(slog.NewTextHandler(waiting, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	t.Cleanup(model.release)
	user := r.mem.UserID("alice")
	r.ask("alice", "s1", "I am moving to Porto next month.", fakeopenai.Text("Exciting!"))
	select {
	case <-model.entered: // s1 idled out: its end is writing its summary
	case <-time.After(10 * time.Second):
		t.Fatal("s1 did not idle out")
	}

	r.up.QueueChat(fakeopenai.Text("What a lovely name."))
	done := make(chan error, 1)
	go func() {
		_, err := r.chat("alice").New(ctx, openai.ChatCompletionNewParams{
			Model: "gpt-test", Messages: []openai.ChatCompletionMessageParamUnion{userMessage("My cat is called Miso.")},
		}, option.WithHeader(gateway.SessionHeader, "s1"))
		done <- err
	}()
	select {
	case err := <-done: // answered and recorded under the end
		require.NoError(t, err)
		model.release()
	case <-waiting.seen:
		model.release()
		require.NoError(t, <-done)
	case <-time.After(10 * time.Second):
		t.Fatal("the request neither waited nor was answered")
	}
	r.endSessions("alice")

	ss, err := r.st.ListSessions(ctx, user, store.SessionFilter{})
	require.NoError(t, err)
	require.Len(t, ss, 2, "s1, and the memory session after it")
	for _, d := range ss {
		turns, err := r.st.ListTurns(ctx, user, d.ID, 0)
		require.NoError(t, err)
		require.Len(t, turns, 1, "session %s", d.ID)
		if d.ID == "s1" {
			assert.Contains(t, turns[0].Messages[0].Content, "Porto")
			assert.Contains(t, d.Summary, "Porto")
			continue
		}
		assert.Contains(t, turns[0].Messages[0].Content, "Miso", "the request's turn went on in the next session")
		assert.Contains(t, d.Summary, "Miso", "whose summary covers it")
	}
}
