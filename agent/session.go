package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/agentmemory/agentmemory/internal/ident"
)

// ErrInvalidUserID reports an empty or malformed user id.
var ErrInvalidUserID = errors.New("agent: invalid user id")

// ErrInvalidSessionID reports a malformed session id.
var ErrInvalidSessionID = errors.New("agent: invalid session id")

// ValidateSessionID checks that id is usable as a session id, which the
// stores put in their keys: the rule of ValidateUserID (not blank, at most
// 255 bytes of valid UTF-8, without control characters, '/', '\\', '?' or
// '#'). Its error wraps ErrInvalidSessionID.
func ValidateSessionID(id string) error {
	if err := ident.Check(id); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidSessionID, err)
	}
	return nil
}

// ValidateUserID checks that id is usable as a user id (and so as a Cosmos
// DB partition key): not blank, at most 255 bytes of valid UTF-8, without
// control characters, '/', '\\', '?' or '#', and not the one id the stores
// reserve for their deletion log. Its error wraps ErrInvalidUserID.
func ValidateUserID(id string) error {
	if err := ident.CheckUser(id); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidUserID, err)
	}
	return nil
}

// Session is one conversation: its id, the user it belongs to, the messages
// the agent keeps, and a state bag in which context providers keep their
// per-session state.
//
// A Session is safe for concurrent use; Agent.Run serialises runs on the
// same session. Marshal it with encoding/json to survive a restart.
type Session struct {
	mu    sync.Mutex
	runMu sync.Mutex // held for a whole run

	id       string
	userID   string
	messages []Message
	state    map[string]json.RawMessage
}

// NewSession returns an empty session with the given id and user id. An
// empty id gets a random one, any other is validated with
// ValidateSessionID; the user id may be empty for agents without per-user
// context, and is otherwise validated with ValidateUserID.
func NewSession(id, userID string) (*Session, error) {
	if userID != "" {
		if err := ValidateUserID(userID); err != nil {
			return nil, err
		}
	}
	if id == "" {
		id = NewID()
	} else if err := ValidateSessionID(id); err != nil {
		return nil, err
	}
	return &Session{id: id, userID: userID}, nil
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

// UserID returns the id of the user the session belongs to, or "".
func (s *Session) UserID() string { return s.userID }

// Messages returns a copy of the conversation history.
func (s *Session) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.messages...)
}

// Len returns the number of messages in the history.
func (s *Session) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.messages)
}

// AppendMessages adds messages to the history.
func (s *Session) AppendMessages(msgs ...Message) {
	s.mu.Lock()
	s.messages = append(s.messages, msgs...)
	s.mu.Unlock()
}

// SetMessages replaces the history, for a provider that trims it.
func (s *Session) SetMessages(msgs []Message) {
	s.mu.Lock()
	s.messages = append([]Message(nil), msgs...)
	s.mu.Unlock()
}

// SetState stores v, encoded as JSON, under key in the session's state bag.
func (s *Session) SetState(key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("agent: session state %q: %w", key, err)
	}
	s.mu.Lock()
	if s.state == nil {
		s.state = make(map[string]json.RawMessage)
	}
	s.state[key] = b
	s.mu.Unlock()
	return nil
}

// State decodes the value stored under key into v and reports whether there
// was one.
func (s *Session) State(key string, v any) (bool, error) {
	s.mu.Lock()
	b, ok := s.state[key]
	s.mu.Unlock()
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return true, fmt.Errorf("agent: session state %q: %w", key, err)
	}
	return true, nil
}

// DeleteState removes key from the state bag.
func (s *Session) DeleteState(key string) {
	s.mu.Lock()
	delete(s.state, key)
	s.mu.Unlock()
}

type sessionJSON struct {
	ID       string                     `json:"id"`
	UserID   string                     `json:"user_id,omitempty"`
	Messages []Message                  `json:"messages"`
	State    map[string]json.RawMessage `json:"state,omitempty"`
}

// MarshalJSON implements json.Marshaler.
func (s *Session) MarshalJSON() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	msgs := s.messages
	if msgs == nil {
		msgs = []Message{}
	}
	return json.Marshal(sessionJSON{ID: s.id, UserID: s.userID, Messages: msgs, State: s.state})
}

// UnmarshalJSON implements json.Unmarshaler. It rejects a session without an
// id, with an invalid user id, or with a message of unknown role.
func (s *Session) UnmarshalJSON(b []byte) error {
	var j sessionJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("agent: decode session: %w", err)
	}
	if j.ID == "" {
		return errors.New("agent: decode session: missing id")
	}
	if err := ValidateSessionID(j.ID); err != nil {
		return fmt.Errorf("agent: decode session: %w", err)
	}
	if j.UserID != "" {
		if err := ValidateUserID(j.UserID); err != nil {
			return fmt.Errorf("agent: decode session: %w", err)
		}
	}
	for i, m := range j.Messages {
		if !m.Role.Valid() {
			return fmt.Errorf("agent: decode session: message %d: unknown role %q", i, m.Role)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.id, s.userID, s.messages, s.state = j.ID, j.UserID, j.Messages, j.State
	return nil
}
