package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/keeper"
	"github.com/agentmemory/agentmemory/store"
)

// session returns the agent session a client's session id names.
func (h *handlers) session(id string) (*agent.Session, error) {
	id = strings.TrimSpace(id)
	if err := store.CheckID("session_id", id); err != nil {
		return nil, err
	}
	return agent.NewSession(id, h.user)
}

func (h *handlers) record(ctx context.Context, in recordIn) (recordOut, error) {
	sess, err := h.session(in.SessionID)
	if err != nil {
		return recordOut{}, err
	}
	if strings.TrimSpace(in.User) == "" {
		return recordOut{}, errors.New("user is empty: give what the user said")
	}
	user, assistant := agent.UserText(in.User), agent.AssistantText(in.Assistant)
	if in.TurnID != "" {
		if strings.TrimSpace(in.TurnID) == "" {
			return recordOut{}, errors.New("turn_id is blank: give an id or leave it out")
		}
		user.ID, assistant.ID = messageIDs(h.user, sess.ID(), in.TurnID)
		done, err := h.recorded(ctx, sess.ID(), user.ID)
		if err != nil {
			return recordOut{}, fmt.Errorf("looking for turn_id %q failed: %w", in.TurnID, err)
		}
		if done {
			return recordOut{Stored: true, AlreadyRecorded: true}, nil
		}
	}
	msgs := []agent.Message{user}
	if strings.TrimSpace(in.Assistant) != "" {
		msgs = append(msgs, assistant)
	}
	err = h.mem.Record(ctx, sess, msgs...)
	if errors.Is(err, keeper.ErrSessionCompleted) {
		return recordOut{}, fmt.Errorf("session %q has ended: record this exchange under a new session_id", sess.ID())
	}
	if err != nil {
		return recordOut{}, fmt.Errorf("storing the exchange failed: %w", err)
	}
	return recordOut{Stored: true}, nil
}

// messageIDs are the ids of the user and assistant messages of the
// client's turn turnID: the same for a repeat, and distinct across users
// and sessions (an interaction lists its messages' ids as its TurnIDs, and
// a retrieval leaves out those already in the conversation, so an id
// reused elsewhere would hide a memory). User and session ids hold no
// control characters, so the NUL separators keep the input unambiguous.
func messageIDs(userID, sessionID, turnID string) (user, assistant string) {
	sum := sha256.Sum256([]byte(userID + "\x00" + sessionID + "\x00" + turnID))
	id := "turn-" + hex.EncodeToString(sum[:16])
	return id + "-user", id + "-assistant"
}

// recorded reports whether the session already holds the message with id
// msgID: its turns are kept whole, pruned or not, even once it has ended.
func (h *handlers) recorded(ctx context.Context, sessionID, msgID string) (bool, error) {
	turns, err := h.st.ListTurns(ctx, h.user, sessionID, 0)
	if err != nil {
		return false, err
	}
	for _, t := range turns {
		if slices.ContainsFunc(t.Messages, func(m store.TurnMessage) bool { return m.ID == msgID }) {
			return true, nil
		}
	}
	return false, nil
}

func (h *handlers) end(ctx context.Context, in sessionIn) (endOut, error) {
	sess, err := h.session(in.SessionID)
	if err != nil {
		return endOut{}, err
	}
	doc, err := h.st.GetSession(ctx, h.user, sess.ID())
	if errors.Is(err, store.ErrNotFound) {
		return endOut{}, fmt.Errorf("no session %q: record_turn starts one", sess.ID())
	}
	if err != nil {
		return endOut{}, fmt.Errorf("reading the session failed: %w", err)
	}
	if doc.Status == store.SessionCompleted {
		return endOut{Summary: doc.Summary}, nil
	}
	res, err := h.mem.EndSession(ctx, sess)
	if err != nil {
		return endOut{}, fmt.Errorf("ending the session failed: %w", err)
	}
	return endOut{Summary: res.Session.Summary, Interactions: len(res.Pruned)}, nil
}

func (h *handlers) updateProfile(ctx context.Context, _ empty) (profileOut, error) {
	res, err := h.mem.Reflector().ReflectLongTerm(ctx, h.user)
	if err != nil {
		return profileOut{}, fmt.Errorf("updating the profile failed: %w", err)
	}
	out := profileOut{Folded: len(res.Folded)}
	if res.Profile != nil {
		out.Profile = res.Profile.InsightText
	}
	return out, nil
}
