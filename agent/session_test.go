package agent

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidateUserID(t *testing.T) {
	require.NoError(t, ValidateUserID("user-123@example.com"))
	for _, bad := range []string{"", "   ", "a/b", `a\b`, "a?b", "a#b", "a\nb", strings.Repeat("x", 256), "\xff",
		"agentmemory.deletion-log"} { // reserved for the stores' deletion log
		assert.ErrorIs(t, ValidateUserID(bad), ErrInvalidUserID, "%q", bad)
	}
}

func TestNewUserSessionRejectsEmptyUser(t *testing.T) {
	a := New(nopClient{}, Config{})
	_, err := a.NewUserSession("")
	assert.ErrorIs(t, err, ErrInvalidUserID)
	_, err = NewSession("s1", "bad/user")
	assert.ErrorIs(t, err, ErrInvalidUserID)
	s, err := a.NewUserSession("u1")
	require.NoError(t, err)
	assert.Equal(t, "u1", s.UserID())
	assert.Len(t, s.ID(), 32)
}

// A session id goes into the store's keys: one the stores cannot hold is
// refused where it is made, not later by a memory write that fails
// quietly.
func TestNewSessionRejectsABadSessionID(t *testing.T) {
	for _, bad := range []string{"   ", "a/b", `a\b`, "a?b", "a#b", "a\tb", strings.Repeat("x", 256), "\xff"} {
		_, err := NewSession(bad, "u1")
		assert.ErrorIs(t, err, ErrInvalidSessionID, "%q", bad)
		if utf8.ValidString(bad) { // JSON cannot carry invalid UTF-8
			id, _ := json.Marshal(bad)
			var s Session
			assert.ErrorIs(t, json.Unmarshal([]byte(`{"id":`+string(id)+`,"user_id":"u1"}`), &s), ErrInvalidSessionID, "decoded %q", bad)
		}
	}
	s, err := NewSession("chat:2026-11-23 1", "u1")
	require.NoError(t, err)
	assert.Equal(t, "chat:2026-11-23 1", s.ID())
}

func TestSessionJSONRoundTrip(t *testing.T) {
	s, err := NewSession("s1", "u1")
	require.NoError(t, err)
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	s.AppendMessages(
		Message{ID: "m1", Role: RoleUser, Text: "hi", CreatedAt: at},
		Message{ID: "m2", Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "f", Arguments: json.RawMessage(`{"a":1}`)}}, CreatedAt: at},
		Message{ID: "m3", Role: RoleTool, ToolCallID: "c1", Name: "f", Text: "ok", CreatedAt: at},
	)
	require.NoError(t, s.SetState("memory", map[string]int{"turns": 3}))

	b, err := json.Marshal(s)
	require.NoError(t, err)
	var back Session
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, "s1", back.ID())
	assert.Equal(t, "u1", back.UserID())
	assert.Equal(t, s.Messages(), back.Messages())
	var st map[string]int
	ok, err := back.State("memory", &st)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, 3, st["turns"])

	ok, err = back.State("absent", &st)
	assert.False(t, ok)
	assert.NoError(t, err)
	back.DeleteState("memory")
	ok, _ = back.State("memory", &st)
	assert.False(t, ok)
}

func TestSessionUnmarshalRejects(t *testing.T) {
	for name, doc := range map[string]string{
		"no id":        `{"messages":[]}`,
		"bad user":     `{"id":"s","user_id":"a/b"}`,
		"unknown role": `{"id":"s","messages":[{"role":"wizard","text":"x"}]}`,
		"not json":     `{"id":`,
	} {
		var s Session
		assert.Error(t, json.Unmarshal([]byte(doc), &s), name)
	}
}
