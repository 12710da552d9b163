package gateway

import (
	"container/list"
	"context"
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
}

type sessionEntry struct {
	key   string
	sess  *agent.Session
	timer *time.Timer
}

func newSessions(max int, idle time.Duration, end func(*agent.Session, bool) time.Duration) *sessions {
	return &sessions{max: max, idle: idle, end: end, order: list.New(), byKey: map[string]*list.Element{}, noted: map[string]bool{}}
}

// get returns the agent session id of user userID, made on first use,
// and (re)arms its idle timer.
func (s *sessions) get(userID, id string) (*agent.Session, error) {
	key := userID + "\x00" + id
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.byKey[key]; ok {
		s.order.MoveToFront(e)
		se := e.Value.(*sessionEntry)
		if !s.closed {
			se.timer.Reset(s.idle)
		}
		return se.sess, nil
	}
	sess, err := agent.NewSession(id, userID)
	if err != nil {
		return nil, err
	}
	se := &sessionEntry{key: key, sess: sess}
	se.timer = time.AfterFunc(s.idle, func() { s.idled(se) })
	if s.closed {
		se.timer.Stop()
	}
	s.byKey[key] = s.order.PushFront(se)
	for s.order.Len() > s.max {
		last := s.order.Back().Value.(*sessionEntry)
		s.remove(last)
		s.endLocked(last, false)
	}
	return sess, nil
}

// move returns the agent session to of from's user (made on first use)
// and lets go of from's entry without ending it: the memory session from
// was in has ended, and the chain goes on in to.
func (s *sessions) move(from *agent.Session, to string) (*agent.Session, error) {
	sess, err := s.get(from.UserID(), to)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.byKey[from.UserID()+"\x00"+from.ID()]; ok && e.Value.(*sessionEntry).sess == from {
		s.remove(e.Value.(*sessionEntry))
	}
	return sess, nil
}

// touch rearms the idle timer of sess, at the end of a request: a
// session's idle time counts from its last answer.
func (s *sessions) touch(sess *agent.Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.byKey[sess.UserID()+"\x00"+sess.ID()]; ok && !s.closed {
		e.Value.(*sessionEntry).timer.Reset(s.idle)
	}
}

// idled ends a session whose timer fired, unless a request rearmed it
// meanwhile (the entry is still the one kept, and its timer not pending).
func (s *sessions) idled(se *sessionEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	e, ok := s.byKey[se.key]
	if !ok || e.Value.(*sessionEntry) != se {
		return
	}
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
	go func() {
		defer s.wg.Done()
		defer s.endDone()
		wait := s.end(se.sess, ifIdle)
		if wait <= 0 {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if e, ok := s.byKey[se.key]; ok && e.Value.(*sessionEntry) == se && !s.closed {
			se.timer.Reset(wait)
		}
	}()
}

// endDone counts an end finished.
func (s *sessions) endDone() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running--
	if s.running == 0 {
		close(s.settled)
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

// remove forgets se; s.mu is held.
func (s *sessions) remove(se *sessionEntry) {
	se.timer.Stop()
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
		e.Value.(*sessionEntry).timer.Stop()
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
