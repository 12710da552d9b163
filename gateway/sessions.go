package gateway

import (
	"container/list"
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/agentmemory/agentmemory/agent"
)

// defaultSession is the agent session of a user's requests that name no
// session.
const defaultSession = "gateway"

// sessions holds the agent sessions of the gateway's users, by store user
// id and session id, and ends each once it has been idle for idle (end
// runs in a goroutine of its own; the memory provider begins the next
// memory session at the agent session's next request). Beyond max the
// least recently used is ended and let go: a later request with its id
// begins anew.
//
// A session is idle only with no request of it in flight here: get
// takes a lease for the request, which its release gives back at the
// request's end, and the idle time counts from the release of the last
// lease. An idle end under a request would summarize the session without
// the request's turn, which would go to the next memory session.
//
// A request that comes once the idle timer has fired (idled has begun the
// end), or while the end of an entry let go under its key is under way,
// waits in get until that end is done, then goes on in the next memory
// session, which the provider begins at the request's Invoking: the end
// summarizes the session as it was, and the request's turn is recorded in
// the next one, with everything the request reads (a chain's response id
// names the next one too). The lease does not cancel the end: an end is
// not undone halfway (the interactions it pruned stay written, and the
// store's marker, saying the session is ending, has the next claim end
// it, here or at another replica), and one past its last write cannot be
// cancelled at all. The wait costs the request the rest of the end (its
// model calls: the last turns' metadata, the summary), bounded by the
// end's time limit (Config.UpstreamTimeout), at most once per idle time.
// A timer that fired but has not begun the end finds the lease taken and
// ends nothing. Only this process's requests wait: one another replica
// serves meanwhile is placed by its provider.
//
// A timer here sees only this process's requests: when it fires, end
// (ifIdle true) ends the session only if the store shows it idle, and
// otherwise returns how long until it may be, for the timer to fire
// again then; requests another replica served keep it open.
type sessions struct {
	idle time.Duration
	end  func(sess *agent.Session, ifIdle bool) (wait time.Duration)
	max  int

	mu     sync.Mutex
	order  *list.List // of *sessionEntry, most recent first
	byKey  map[string]*list.Element
	closed bool
	wg     sync.WaitGroup // ends running
	// running counts the ends under way; settled is closed when it falls
	// to zero (made anew when it rises from zero).
	running int
	settled chan struct{}
	// noted are the users whose scope is recorded in the memory store.
	noted map[string]bool
	// ending are the ends under way, by entry key: get waits for them.
	ending map[string]*ends
	log    *slog.Logger
}

// ends are the ends of one key under way (an idle end and the end of its
// entry let go may overlap): done is closed when the last is done.
type ends struct {
	n    int
	done chan struct{}
}

type sessionEntry struct {
	key  string
	sess *agent.Session
	// timer is armed only while no request is in flight (inflight is
	// zero); gen tells the timer armed last from one that fired while it
	// was being stopped or rearmed, whose idled then does nothing.
	timer *time.Timer
	gen   uint64
	// inflight counts the leases not released.
	inflight int
	// movedTo is the entry move handed the agent session's leases to:
	// they are released there.
	movedTo *sessionEntry
}

// lease is one request's hold on an agent session, from get to release:
// while any is held the session does not idle out.
type lease struct {
	s  *sessions
	se *sessionEntry // followed through movedTo when released
	// sess is the agent session the request goes on in (move changes it).
	sess     *agent.Session
	released bool
}

func newSessions(max int, idle time.Duration, end func(*agent.Session, bool) time.Duration, log *slog.Logger) *sessions {
	return &sessions{max: max, idle: idle, end: end, log: log, order: list.New(), byKey: map[string]*list.Element{},
		noted: map[string]bool{}, ending: map[string]*ends{}}
}

// get returns a lease on the agent session id of user userID, made on
// first use: its idle timer is stopped until the lease, and every other
// lease on it, is released. When an end of the session is under way, get
// returns once it is done (see sessions).
func (s *sessions) get(userID, id string) (*lease, error) {
	s.mu.Lock()
	se, err := s.entryLocked(userID, id)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	se.inflight++
	s.disarm(se)
	l := &lease{s: s, se: se, sess: se.sess}
	e := s.ending[se.key]
	s.mu.Unlock()
	if e != nil {
		s.log.Debug("gateway: a request waits for the end of its session, to go on in the next memory session", "session", id)
		<-e.done
	}
	return l, nil
}

// entryLocked returns the entry of userID's session id, most recently
// used now, made on first use (ending and letting go of the least
// recently used beyond max); s.mu is held. A new entry's timer is not
// armed: its caller leases it.
func (s *sessions) entryLocked(userID, id string) (*sessionEntry, error) {
	key := userID + "\x00" + id
	if e, ok := s.byKey[key]; ok {
		s.order.MoveToFront(e)
		return e.Value.(*sessionEntry), nil
	}
	sess, err := agent.NewSession(id, userID)
	if err != nil {
		return nil, err
	}
	se := &sessionEntry{key: key, sess: sess}
	s.byKey[key] = s.order.PushFront(se)
	for s.order.Len() > s.max {
		last := s.evictee(se)
		s.remove(last)
		s.endLocked(last, false)
	}
	return se, nil
}

// evictee is the entry to let go beyond max, other than the entry made
// (not leased yet): the least recently used with no request in flight,
// whose end cuts no request short, else (all in flight) the least
// recently used. An entry let go with requests in flight is ended once,
// here: their releases find it let go and arm nothing, and their turns
// go to the next memory session.
func (s *sessions) evictee(made *sessionEntry) *sessionEntry {
	for e := s.order.Back(); e != nil; e = e.Prev() {
		if se := e.Value.(*sessionEntry); se != made && se.inflight == 0 {
			return se
		}
	}
	return s.order.Back().Value.(*sessionEntry)
}

// move puts l's request, and every other request in flight on its agent
// session, in the agent session to of the same user (made on first use),
// and lets go of the former entry without ending it: the memory session
// it was in has ended, and the chain goes on in to. The leases are
// released on to's entry.
func (s *sessions) move(l *lease, to string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	from := l.se.current()
	se, err := s.entryLocked(from.sess.UserID(), to)
	if err != nil {
		return err
	}
	l.se, l.sess = se, se.sess
	if se == from { // a request beside l's moved it there already
		return nil
	}
	s.remove(from)
	se.inflight += from.inflight
	from.inflight = 0
	from.movedTo = se
	if se.inflight > 0 {
		s.disarm(se)
	}
	return nil
}

// current is the entry se's leases are released on.
func (se *sessionEntry) current() *sessionEntry {
	for se.movedTo != nil {
		se = se.movedTo
	}
	return se
}

// release ends l's hold, at the end of its request; a second call does
// nothing. The last lease released arms the idle timer: a session's idle
// time counts from its last answer.
func (l *lease) release() {
	s := l.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if l.released {
		return
	}
	l.released = true
	se := l.se.current()
	se.inflight--
	if se.inflight == 0 && s.kept(se) {
		s.arm(se, s.idle)
	}
}

// kept reports whether se is the entry held under its key (not let go);
// s.mu is held.
func (s *sessions) kept(se *sessionEntry) bool {
	e, ok := s.byKey[se.key]
	return ok && e.Value.(*sessionEntry) == se
}

// arm (re)starts se's idle timer to fire after d, unless s is closed;
// s.mu is held.
func (s *sessions) arm(se *sessionEntry, d time.Duration) {
	s.disarm(se)
	if s.closed {
		return
	}
	gen := se.gen
	se.timer = time.AfterFunc(d, func() { s.idled(se, gen) })
}

// disarm stops se's idle timer; one that fired already finds gen moved
// on. s.mu is held.
func (s *sessions) disarm(se *sessionEntry) {
	se.gen++
	if se.timer != nil {
		se.timer.Stop()
		se.timer = nil
	}
}

// idled ends a session whose timer gen fired, unless it was rearmed or
// stopped meanwhile (a request leased it), or let go.
func (s *sessions) idled(se *sessionEntry, gen uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || se.gen != gen || se.inflight > 0 || !s.kept(se) {
		return
	}
	se.timer = nil
	// Kept, not removed: the agent session's next request goes on in it
	// (its next memory session).
	s.endLocked(se, true)
}

// endLocked runs end for se in the background; s.mu is held. When end
// reports the session still in use (another replica served it), se's
// timer fires again once it may be idle, unless se was let go meanwhile.
func (s *sessions) endLocked(se *sessionEntry, ifIdle bool) {
	if s.closed {
		return
	}
	s.wg.Add(1)
	if s.running == 0 {
		s.settled = make(chan struct{})
	}
	s.running++
	e := s.ending[se.key]
	if e == nil {
		e = &ends{done: make(chan struct{})}
		s.ending[se.key] = e
	}
	e.n++
	go func() {
		defer s.wg.Done()
		defer s.endDone(se.key)
		wait := s.end(se.sess, ifIdle)
		if wait <= 0 {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		// A request leased meanwhile arms it at its release.
		if se.inflight == 0 && se.timer == nil && s.kept(se) {
			s.arm(se, wait)
		}
	}()
}

// endDone counts an end of key finished.
func (s *sessions) endDone(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running--
	if s.running == 0 {
		close(s.settled)
	}
	e := s.ending[key]
	e.n--
	if e.n == 0 {
		close(e.done)
		delete(s.ending, key)
	}
}

// settle waits until no end is under way, or ctx ends.
func (s *sessions) settle(ctx context.Context) error {
	for {
		s.mu.Lock()
		if s.running == 0 {
			s.mu.Unlock()
			return nil
		}
		ch := s.settled
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// remove forgets se; s.mu is held. Its leases still held are released
// on it, arming nothing.
func (s *sessions) remove(se *sessionEntry) {
	s.disarm(se)
	if e, ok := s.byKey[se.key]; ok && e.Value.(*sessionEntry) == se {
		s.order.Remove(e)
		delete(s.byKey, se.key)
	}
}

// dropUser forgets the sessions of userID without ending them (after its
// memory is forgotten).
func (s *sessions) dropUser(userID string) {
	prefix := userID + "\x00"
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, e := range s.byKey {
		if strings.HasPrefix(key, prefix) {
			s.remove(e.Value.(*sessionEntry))
		}
	}
	delete(s.noted, userID)
}

// close stops the idle timers and waits for the ends running (until done
// is closed). Sessions still open stay open in the store.
func (s *sessions) close(done <-chan struct{}) bool {
	s.mu.Lock()
	s.closed = true
	for _, e := range s.byKey {
		s.disarm(e.Value.(*sessionEntry))
	}
	s.mu.Unlock()
	finished := make(chan struct{})
	go func() { s.wg.Wait(); close(finished) }()
	select {
	case <-finished:
		return true
	case <-done:
		return false
	}
}

// note reports whether userID's scope is to be recorded, marking it so;
// unnote undoes it after a failure.
func (s *sessions) note(userID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.noted[userID] {
		return false
	}
	if len(s.noted) >= s.max { // noting again is harmless: start afresh
		clear(s.noted)
	}
	s.noted[userID] = true
	return true
}

func (s *sessions) unnote(userID string) {
	s.mu.Lock()
	delete(s.noted, userID)
	s.mu.Unlock()
}
