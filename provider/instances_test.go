package provider_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/longtest"
	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/internal/stack"
	"github.com/agentmemory/agentmemory/keeper"
	"github.com/agentmemory/agentmemory/lease"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/reflection"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// Several app instances on one store: each test opens a provider per
// instance, each on its own handle of one SQLite file (as separate
// processes would), and checks that the background work of one is not
// lost, cut short or done twice because of another.

// record stores turns from..to of questions in sess through s, as runs
// would, without a model call: a run's own time would count against the
// short idle timeouts here on a loaded machine.
func record(t *testing.T, s *offlineStack, sess *agent.Session, from, to int) {
	t.Helper()
	for i := from; i <= to; i++ {
		require.NoError(t, s.mem.Record(context.Background(), sess, agent.UserText(fmt.Sprintf("%d. %s", i, questions[i%len(questions)]))))
	}
}

// instance opens one more instance on the file at path.
func instance(t *testing.T, path string, mut func(*provider.Config)) *offlineStack {
	t.Helper()
	s := openOffline(t, path, mut)
	t.Cleanup(func() { _ = s.mem.Close(context.Background()) })
	return s
}

// idleInstances is the configuration of the ModeIdle instances below.
func idleInstances(idle time.Duration) func(*provider.Config) {
	return func(c *provider.Config) {
		c.Mode = provider.ModeIdle
		c.IdleTimeout = idle
		c.SweepInterval = 50 * time.Millisecond
		c.ClaimTTL = 2 * time.Second
		c.ReflectionConfig.LeaseTTL = 2 * time.Second
	}
}

// A user's conversation moves between instances (a load balancer): the
// idle timer of the instance that served its first run does not end the
// session while runs keep arriving through another; the session ends once,
// idle, and every turn is in it, each in exactly one interaction.
func TestIdleSessionKeptAliveThroughAnotherInstance(t *testing.T) {
	ctx := context.Background()
	path := sqlitetest.NewFile(t)
	const idle = time.Second
	a := instance(t, path, idleInstances(idle))
	b := instance(t, path, idleInstances(idle))
	sessA, err := agent.NewSession("s1", "u1")
	require.NoError(t, err)
	sessB, err := agent.NewSession("s1", "u1")
	require.NoError(t, err)

	record(t, a, sessA, 1, 1)
	// Turns through b every 200 ms, until well past a's first timer.
	for i := 2; i <= 7; i++ {
		time.Sleep(idle / 5)
		record(t, b, sessB, i, i)
	}
	doc, err := a.st.GetSession(ctx, "u1", "s1")
	require.NoError(t, err)
	require.Equal(t, store.SessionActive, doc.Status, "runs kept coming through b: a's timer must not end the session")

	require.Eventually(t, func() bool {
		doc, err := a.st.GetSession(ctx, "u1", "s1")
		return err == nil && doc.Status == store.SessionCompleted
	}, 10*time.Second, 20*time.Millisecond, "the session ends once idle")
	require.NoError(t, a.mem.Flush(ctx))
	require.NoError(t, b.mem.Flush(ctx))
	sessions, err := a.st.ListSessions(ctx, "u1", store.SessionFilter{})
	require.NoError(t, err)
	require.Len(t, sessions, 1, "one memory session: no run went to a next one")
	assertEachTurnOnce(t, a.st, "u1", "s1", 7)
	ended := strings.Count(a.logs.String(), "memory: session ended") + strings.Count(b.logs.String(), "memory: session ended")
	assert.Equal(t, 1, ended, "ended by one instance")
}

// The instance holding a ModeIdle session's timer dies (Close: its timers
// stop, the session stays open): another instance ends the session once
// it has been idle, and reflects on it; with two instances sweeping, one
// does it, and no insight is stored twice.
func TestIdleSessionOfADeadInstanceIsEndedByAnother(t *testing.T) {
	ctx := context.Background()
	path := sqlitetest.NewFile(t)
	const idle = 300 * time.Millisecond
	a := instance(t, path, idleInstances(idle))
	sess, err := a.a.NewUserSession("u1")
	require.NoError(t, err)
	record(t, a, sess, 1, 3)
	require.NoError(t, a.mem.Close(ctx)) // dies with the timer pending

	b := instance(t, path, idleInstances(idle))
	c := instance(t, path, idleInstances(idle))
	require.Eventually(t, func() bool {
		doc, err := b.st.GetSession(ctx, "u1", sess.ID())
		return err == nil && doc.Status == store.SessionCompleted && doc.ReflectionStatus != store.ReflectionPending
	}, 10*time.Second, 20*time.Millisecond, "another instance ends the idle session and reflects on it")
	require.Eventually(t, func() bool { return len(markers(t, b.st)) == 0 }, 5*time.Second, 20*time.Millisecond,
		"no work left outstanding")
	require.NoError(t, b.mem.Flush(ctx))
	require.NoError(t, c.mem.Flush(ctx))
	ended := strings.Count(b.logs.String(), "memory: session ended") + strings.Count(c.logs.String(), "memory: session ended")
	if !assert.Equal(t, 1, ended, "ended by one instance") {
		t.Log("B:\n", b.logs.String(), "\nC:\n", c.logs.String())
	}
	assertEachTurnOnce(t, b.st, "u1", sess.ID(), 3)
	assertInsightsOnce(t, b.st, "u1")
}

// assertInsightsOnce checks that no insight text of the user is stored
// twice.
func assertInsightsOnce(t *testing.T, st store.Store, user string) {
	t.Helper()
	ins, err := st.ListInsights(context.Background(), user, store.InsightFilter{IncludeSuperseded: true})
	require.NoError(t, err)
	seen := map[string]string{}
	for _, in := range ins {
		require.Empty(t, seen[in.ContentHash], "insight %q stored twice (%s and %s)", in.InsightText, seen[in.ContentHash], in.ID)
		seen[in.ContentHash] = in.ID
	}
}

// markers returns the markers of outstanding session work on st.
func markers(t *testing.T, st store.Store) []*store.Session {
	t.Helper()
	docs, err := st.ListSessions(context.Background(), provider.SweepUserID, store.SessionFilter{})
	require.NoError(t, err)
	return docs
}

// instanceChildEnv turns the test binary into the child of
// TestEndedSessionOfAKilledInstanceIsReflectedByAnother and
// TestKilledInstanceTrials: "path|session|hold" or "path|session|run".
const instanceChildEnv = "AGENTMEMORY_PROVIDER_INSTANCE_CHILD"

// instanceChild records three turns of one session on the file, prints
// "end", ends the session (its reflection queued) and prints "ended";
// then, with hold, it waits to be killed, and otherwise waits for its
// background work, prints "flushed" and exits.
func instanceChild(spec string) {
	parts := strings.Split(spec, "|")
	path, session, hold := parts[0], parts[1], parts[2] == "hold"
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path, sqlite.Config{Dimensions: 384})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(3)
	}
	m, err := stack.ModelsFromEnv(nil, true)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(3)
	}
	mem, err := provider.New(st, provider.Config{Chat: m.Chat, Embedder: m.Embedder, KeeperConfig: keeper.Config{K: 3},
		ClaimTTL: 300 * time.Millisecond, ReflectionConfig: childReflection(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(3)
	}
	sess, err := agent.NewSession(session, "u1")
	if err != nil {
		os.Exit(3)
	}
	for i, q := range questions[:3] {
		msg := agent.UserText(q)
		msg.ID = fmt.Sprintf("%s-t%d", session, i+1)
		if err := mem.Record(ctx, sess, msg); err != nil {
			fmt.Fprintln(os.Stderr, "child: record:", err)
			os.Exit(3)
		}
	}
	fmt.Println("end")
	if _, err := mem.EndSession(ctx, sess); err != nil {
		fmt.Fprintln(os.Stderr, "child: end:", err)
		os.Exit(3)
	}
	fmt.Println("ended")
	if hold {
		select {} // the reflection waits for the user's lease, which the test holds
	}
	if err := mem.Flush(ctx); err != nil {
		os.Exit(3)
	}
	fmt.Println("flushed")
	os.Exit(0)
}

func childReflection() (c reflection.Config) {
	c.LeaseTTL = 2 * time.Second
	return c
}

// An instance ends a session and is killed (SIGKILL) before the session's
// reflection ran: another instance on the store reflects on it, once.
func TestEndedSessionOfAKilledInstanceIsReflectedByAnother(t *testing.T) {
	ctx := context.Background()
	path := sqlitetest.NewFile(t)
	st, err := sqlite.Open(ctx, path, sqlite.Config{Dimensions: 384})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	// The test holds the user's lease, so that the child's reflection
	// waits for it until the child is killed.
	release, err := lease.Acquire(ctx, st, "u1", "the-test", lease.Config{TTL: time.Minute})
	require.NoError(t, err)

	cmd, sc, stderr := startChild(t, instanceChildEnv+"="+path+"|s-killed|hold")
	for sc.Scan() && sc.Text() != "ended" {
	}
	require.Equal(t, "ended", sc.Text(), "the child ends its session (stderr: %s)", stderr.String())
	require.NoError(t, cmd.Process.Kill())
	killed := time.Now()
	_ = cmd.Wait()
	require.NotContains(t, stderr.String(), "child:", "the child failed on its own")

	doc, err := st.GetSession(ctx, "u1", "s-killed")
	require.NoError(t, err)
	require.Equal(t, store.SessionCompleted, doc.Status)
	require.Equal(t, store.ReflectionPending, doc.ReflectionStatus, "killed before its reflection ran")
	release()

	b := instance(t, path, func(c *provider.Config) {
		c.SweepInterval = 50 * time.Millisecond
		c.ClaimTTL = 2 * time.Second
		c.ReflectionConfig.LeaseTTL = 2 * time.Second
	})
	require.Eventually(t, func() bool {
		doc, err := b.st.GetSession(ctx, "u1", "s-killed")
		return err == nil && doc.ReflectionStatus != store.ReflectionPending
	}, 10*time.Second, 20*time.Millisecond, "another instance reflects on the session")
	t.Logf("reflected by another instance %v after the kill (the child's claim lasted 300 ms, the sweep runs every 50 ms)",
		time.Since(killed).Round(time.Millisecond))
	require.Eventually(t, func() bool { return len(markers(t, b.st)) == 0 }, 5*time.Second, 20*time.Millisecond,
		"no work left outstanding")
	assertEachTurnOnce(t, b.st, "u1", "s-killed", 3)
	assertInsightsOnce(t, b.st, "u1")
}

// A marker names its user and session: ForgetSession and ForgetUser
// remove it with the rest.
func TestForgetRemovesSessionMarkers(t *testing.T) {
	ctx := context.Background()
	s := instance(t, sqlitetest.NewFile(t), idleInstances(time.Hour))
	one, err := s.a.NewUserSession("u1")
	require.NoError(t, err)
	two, err := s.a.NewUserSession("u1")
	require.NoError(t, err)
	say(t, s, one, 1, 1)
	say(t, s, two, 2, 2)
	require.Len(t, markers(t, s.st), 2, "an open idle session has a marker")

	_, err = s.mem.ForgetSession(ctx, "u1", one.ID())
	require.NoError(t, err)
	require.Len(t, markers(t, s.st), 1, "ForgetSession removes the session's marker")
	_, err = s.mem.ForgetUser(ctx, "u1")
	require.NoError(t, err)
	require.Empty(t, markers(t, s.st), "ForgetUser removes the user's markers")
}

// An instance in ModePerRun dies with one run's session ended but not
// reflected on (its reflection waiting for the user's lease) and the next
// run's end still queued behind it: another instance ends the second
// session once it has been idle, and reflects on both.
func TestPerRunSessionsOfADeadInstanceAreEndedByAnother(t *testing.T) {
	ctx := context.Background()
	path := sqlitetest.NewFile(t)
	perRun := func(c *provider.Config) {
		// Longer than a run takes under -race on a loaded machine: a run
		// session idle that long is ended by a sweep, mid-run or not.
		idleInstances(1500 * time.Millisecond)(c)
		c.Mode = provider.ModePerRun
		c.Workers = 1
		c.ClaimTTL = 500 * time.Millisecond
	}
	a := instance(t, path, perRun)
	release, err := lease.Acquire(ctx, a.st, "u1", "the-test", lease.Config{TTL: time.Minute})
	require.NoError(t, err)
	sess, err := a.a.NewUserSession("u1")
	require.NoError(t, err)
	say(t, a, sess, 1, 1)
	require.Eventually(t, func() bool {
		done, err := a.st.ListSessions(ctx, "u1", store.SessionFilter{Status: store.SessionCompleted})
		return err == nil && len(done) == 1
	}, 5*time.Second, 10*time.Millisecond, "the first run's session ends; its reflection waits for the lease")
	say(t, a, sess, 2, 2) // its end is queued behind that reflection
	dead, cancel := context.WithCancel(ctx)
	cancel()
	_ = a.mem.Close(dead) // dies: the queued work is abandoned
	sessions, err := a.st.ListSessions(ctx, "u1", store.SessionFilter{})
	require.NoError(t, err)
	require.Len(t, sessions, 2)
	release()

	b := instance(t, path, perRun)
	require.Eventually(t, func() bool {
		all, err := b.st.ListSessions(ctx, "u1", store.SessionFilter{})
		if err != nil || len(all) != 2 {
			return false
		}
		for _, d := range all {
			if d.Status != store.SessionCompleted || d.ReflectionStatus == store.ReflectionPending {
				return false
			}
		}
		return true
	}, 10*time.Second, 20*time.Millisecond, "another instance ends the second session and reflects on both")
	require.Eventually(t, func() bool { return len(markers(t, b.st)) == 0 }, 5*time.Second, 20*time.Millisecond,
		"no work left outstanding")
	for _, d := range sessions {
		assertEachTurnOnce(t, b.st, "u1", d.ID, 1)
	}
	assertInsightsOnce(t, b.st, "u1")
}

// TestKilledInstanceTrials kills (SIGKILL) an instance at a random point
// of a session's end and its follow-up — writing the session's marker,
// ending, summarising, reflecting — while another instance sweeps. In
// every trial the session is ended, summarised and reflected on once, by
// one or the other, and no work is left outstanding; unless the kill came
// before the end began (no marker yet), when the session is still open,
// as it would be with one process, and ends when asked. 4 trials by
// default; 40 with AGENTMEMORY_LONG_TESTS set.
func TestKilledInstanceTrials(t *testing.T) {
	ctx := context.Background()
	trials := longtest.Pick(t, 4, 40)
	path := sqlitetest.NewFile(t)
	b := instance(t, path, func(c *provider.Config) {
		c.SweepInterval = 50 * time.Millisecond
		c.ClaimTTL = 2 * time.Second
		c.ReflectionConfig.LeaseTTL = 2 * time.Second
	})
	rng := rand.New(rand.NewPCG(3, 4))
	var open, takenOver, finished int
	for trial := range trials {
		session := fmt.Sprintf("trial-%d", trial)
		cmd, sc, stderr := startChild(t, instanceChildEnv+"="+path+"|"+session+"|run")
		for sc.Scan() && sc.Text() != "end" {
		}
		time.Sleep(time.Duration(rng.IntN(30_000)) * time.Microsecond)
		_ = cmd.Process.Kill()
		phase := ""
		for sc.Scan() {
			phase = sc.Text()
		}
		_ = cmd.Wait()
		require.NotContains(t, stderr.String(), "child:", "the child failed on its own")

		doc, err := b.st.GetSession(ctx, "u1", session)
		require.NoError(t, err)
		if doc.Status == store.SessionActive && !slices.ContainsFunc(markers(t, b.st), func(d *store.Session) bool {
			return strings.Contains(d.State.CumulativeSummary, `"session":"`+session+`"`)
		}) {
			open++ // killed before its end began
			s, err := agent.NewSession(session, "u1")
			require.NoError(t, err)
			_, err = b.mem.EndSession(ctx, s)
			require.NoError(t, err)
		} else if phase == "flushed" {
			finished++
		} else {
			takenOver++
		}
		require.Eventually(t, func() bool {
			doc, err := b.st.GetSession(ctx, "u1", session)
			return err == nil && doc.Status == store.SessionCompleted && doc.ReflectionStatus != store.ReflectionPending && !doc.SummaryPending
		}, 15*time.Second, 20*time.Millisecond, "%s: ended, summarised and reflected on", session)
		require.Eventually(t, func() bool { return len(markers(t, b.st)) == 0 }, 10*time.Second, 20*time.Millisecond,
			"%s: no work left outstanding", session)
		assertEachTurnOnce(t, b.st, "u1", session, 3)
		assertInsightsOnce(t, b.st, "u1")
	}
	t.Logf("%d trials: killed before the end began %d, taken over %d, finished by the child %d", trials, open, takenOver, finished)
}
