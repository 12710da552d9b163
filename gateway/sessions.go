package gateway

import (
	"container/list"
	"strings"
	"sync"

	"github.com/agentmemory/agentmemory/agent"
)

// defaultSession is the agent session of a user's requests that name no
// session: the provider (ModeIdle) keeps the memory session it is in,
// and begins the next after Config.IdleTimeout without a request.
const defaultSession = "gateway"

// sessions holds the agent sessions of the gateway's users, by store user
// id and session id, the least recently used giving way beyond max. A
// session that gives way loses nothing the store keeps; the memory
// session it was in is resumed by id, or the next one begun when it has
// ended.
type sessions struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *list.Element values: keys, most recent first
	byKey map[string]*list.Element
	// noted are the users whose scope is recorded in the memory store.
	noted map[string]bool
}

type sessionEntry struct {
	key  string
	sess *agent.Session
}

func newSessions(max int) *sessions {
	return &sessions{max: max, order: list.New(), byKey: map[string]*list.Element{}, noted: map[string]bool{}}
}

// get returns the agent session id of user userID, made on first use.
func (s *sessions) get(userID, id string) (*agent.Session, error) {
	key := userID + "\x00" + id
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.byKey[key]; ok {
		s.order.MoveToFront(e)
		return e.Value.(*sessionEntry).sess, nil
	}
	sess, err := agent.NewSession(id, userID)
	if err != nil {
		return nil, err
	}
	s.byKey[key] = s.order.PushFront(&sessionEntry{key: key, sess: sess})
	for s.order.Len() > s.max {
		last := s.order.Back()
		s.order.Remove(last)
		delete(s.byKey, last.Value.(*sessionEntry).key)
	}
	return sess, nil
}

// dropUser forgets the sessions of userID (after its memory is forgotten).
func (s *sessions) dropUser(userID string) {
	prefix := userID + "\x00"
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, e := range s.byKey {
		if strings.HasPrefix(key, prefix) {
			s.order.Remove(e)
			delete(s.byKey, key)
		}
	}
	delete(s.noted, userID)
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
