package gateway

import (
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
)

// ended is one call of sessions' end.
type ended struct {
	id     string
	ifIdle bool
	at     time.Time
}

// endRecorder is a sessions' end that reports each call on its channel
// and ends every session at once.
type endRecorder struct{ calls chan ended }

func newEndRecorder() *endRecorder { return &endRecorder{calls: make(chan ended, 16)} }

func (r *endRecorder) end(sess *agent.Session, ifIdle bool) time.Duration {
	r.calls <- ended{id: sess.ID(), ifIdle: ifIdle, at: time.Now()}
	return 0
}

// next returns the next end, failing t when none comes within a second.
func (r *endRecorder) next(t *testing.T) ended {
	t.Helper()
	select {
	case e := <-r.calls:
		return e
	case <-time.After(time.Second):
		t.Fatal("no end within a second")
		return ended{}
	}
}

// none fails t if an end comes within d: only time shows that a timer
// does not fire.
func (r *endRecorder) none(t *testing.T, d time.Duration, why string) {
	t.Helper()
	select {
	case e := <-r.calls:
		t.Fatalf("%s: session %s ended (ifIdle %v)", why, e.id, e.ifIdle)
	case <-time.After(d):
	}
}

const testIdle = 20 * time.Millisecond

var discard = slog.New(slog.DiscardHandler)

func newTestSessions(t *testing.T, max int) (*sessions, *endRecorder) {
	rec := newEndRecorder()
	s := newSessions(max, testIdle, rec.end, discard)
	t.Cleanup(func() { s.close(nil) })
	return s, rec
}

// inflight is the in-flight count of userID's session id, or -1 when it
// is not kept.
func (s *sessions) inflightOf(userID, id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byKey[userID+"\x00"+id]
	if !ok {
		return -1
	}
	return e.Value.(*sessionEntry).inflight
}

func TestTwoOverlappingRequestsKeepTheSessionOpenUntilTheLastEnds(t *testing.T) {
	t.Parallel()
	s, rec := newTestSessions(t, 10)
	first, err := s.get("u", "s")
	require.NoError(t, err)
	second, err := s.get("u", "s")
	require.NoError(t, err)
	assert.Same(t, first.sess, second.sess, "one agent session")
	assert.Equal(t, 2, s.inflightOf("u", "s"))

	first.release()
	first.release() // once only
	assert.Equal(t, 1, s.inflightOf("u", "s"))
	rec.none(t, 5*testIdle, "the second request is in flight")

	last := time.Now()
	second.release()
	e := rec.next(t)
	assert.Equal(t, "s", e.id)
	assert.True(t, e.ifIdle, "an idle end")
	assert.GreaterOrEqual(t, e.at.Sub(last), testIdle, "idle time counts from the last request's end")
	rec.none(t, 3*testIdle, "ended once")
	assert.Equal(t, 0, s.inflightOf("u", "s"), "kept, for the next memory session")
}

// A chain's agent session moved mid-request (follow) takes its requests
// in flight along: they hold the new entry open, and their leases are
// released there; the former entry is let go without an end.
func TestAMoveMidRequestTakesTheRequestsInFlightAlong(t *testing.T) {
	t.Parallel()
	s, rec := newTestSessions(t, 10)
	moving, err := s.get("u", "chain-1")
	require.NoError(t, err)
	beside, err := s.get("u", "chain-1")
	require.NoError(t, err)
	old := moving.sess

	require.NoError(t, s.move(moving, "next"))
	assert.Equal(t, "next", moving.sess.ID())
	assert.Equal(t, "u", moving.sess.UserID())
	assert.Equal(t, -1, s.inflightOf("u", "chain-1"), "the former entry is let go")
	assert.Equal(t, 2, s.inflightOf("u", "next"), "both requests in flight moved")
	assert.Same(t, old, beside.sess, "the request beside goes on with its agent session")

	// A second move of the same chain (the request beside follows too)
	// finds the entry there.
	require.NoError(t, s.move(beside, "next"))
	assert.Same(t, moving.sess, beside.sess)
	assert.Equal(t, 2, s.inflightOf("u", "next"))

	moving.release()
	assert.Equal(t, 1, s.inflightOf("u", "next"))
	rec.none(t, 5*testIdle, "a request is in flight in the new entry")
	beside.release()
	e := rec.next(t)
	assert.Equal(t, "next", e.id, "the session the chain is in ends, not the former one")
	rec.none(t, 3*testIdle, "ended once")
}

func TestEvictionSparesSessionsWithRequestsInFlight(t *testing.T) {
	t.Parallel()
	s, rec := newTestSessions(t, 2)
	held, err := s.get("u", "one")
	require.NoError(t, err)
	idle, err := s.get("u", "two")
	require.NoError(t, err)
	idle.release()
	third, err := s.get("u", "three")
	require.NoError(t, err)
	e := rec.next(t)
	assert.Equal(t, ended{id: "two"}, ended{id: e.id, ifIdle: e.ifIdle}, "the least recently used with no request in flight")
	assert.Equal(t, 1, s.inflightOf("u", "one"))

	// All in flight: the least recently used is let go anyway, ended
	// once; its request's release arms nothing.
	fourth, err := s.get("u", "four")
	require.NoError(t, err)
	e = rec.next(t)
	assert.Equal(t, ended{id: "one"}, ended{id: e.id, ifIdle: e.ifIdle})
	held.release()
	rec.none(t, 5*testIdle, "a session let go is not ended again")

	third.release()
	fourth.release()
	got := map[string]bool{}
	for range 2 {
		e := rec.next(t)
		assert.True(t, e.ifIdle)
		got[e.id] = true
	}
	assert.Equal(t, map[string]bool{"three": true, "four": true}, got)
}

// When another replica served the session, end answers how long until it
// may be idle; a request that comes while the end is under way waits for
// it, holding the session open, and its release arms the idle time.
func TestAnEndThatWaitsDoesNotRearmUnderARequest(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		calls, answer := make(chan string, 4), make(chan time.Duration)
		s := newSessions(10, testIdle, func(sess *agent.Session, _ bool) time.Duration {
			calls <- sess.ID()
			return <-answer
		}, discard)
		defer s.close(nil)
		defer close(answer) // a failed test's end answers 0
		l, err := s.get("u", "s")
		require.NoError(t, err)
		l.release()
		require.Equal(t, "s", <-calls)
		leased := make(chan *lease)
		go func() { // while the end is under way
			l, err := s.get("u", "s")
			assert.NoError(t, err)
			leased <- l
		}()
		synctest.Wait()
		select {
		case <-leased:
			t.Fatal("leased while the end was under way")
		default:
		}
		assert.Equal(t, 1, s.inflightOf("u", "s"), "the request waiting holds the session")
		answer <- testIdle // served elsewhere lately: ask again in testIdle
		l = <-leased
		time.Sleep(5 * testIdle)
		select {
		case id := <-calls:
			t.Fatalf("session %s ended with a request in flight", id)
		default:
		}
		l.release()
		time.Sleep(testIdle)
		synctest.Wait()
		select {
		case id := <-calls:
			assert.Equal(t, "s", id)
			answer <- 0
		default:
			t.Fatal("not ended once idle")
		}
	})
}

// A request for a session let go (beyond max) while its end is under way
// waits for the end too: its new entry goes on in the next memory session.
func TestARequestForASessionLetGoWaitsForItsEnd(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		calls, finish := make(chan ended, 4), make(chan struct{})
		s := newSessions(1, time.Hour, func(sess *agent.Session, ifIdle bool) time.Duration {
			calls <- ended{id: sess.ID(), ifIdle: ifIdle}
			<-finish
			return 0
		}, discard)
		defer s.close(nil)
		finished := sync.OnceFunc(func() { close(finish) })
		defer finished() // a failed test's ends finish
		one, err := s.get("u", "one")
		require.NoError(t, err)
		one.release()
		two, err := s.get("u", "two") // lets one go
		require.NoError(t, err)
		defer two.release()
		require.Equal(t, ended{id: "one"}, <-calls)
		leased := make(chan *lease)
		go func() {
			l, err := s.get("u", "one")
			assert.NoError(t, err)
			leased <- l
		}()
		require.Equal(t, ended{id: "two"}, <-calls, "one's new entry lets two go")
		synctest.Wait()
		select {
		case <-leased:
			t.Fatal("leased while the end of the entry let go was under way")
		default:
		}
		finished()
		l := <-leased
		assert.NotSame(t, one.sess, l.sess, "a new entry")
		l.release()
	})
}

func TestClosedSessionsArmNoTimer(t *testing.T) {
	t.Parallel()
	s, rec := newTestSessions(t, 10)
	l, err := s.get("u", "s")
	require.NoError(t, err)
	require.True(t, s.close(nil))
	l.release()
	rec.none(t, 5*testIdle, "closed")
}
