package adk

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"

	amagent "github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/store"
)

// An ADK session has no end, and may go on after its memory session ended
// (EndSession, or an idle end under provider.ModeIdle); a completed memory
// session takes no more turns. So an ADK session is a chain of memory
// sessions: the first has the ADK session's id, the n-th (n ≥ 2) that id
// followed by "~n". The open one is the first that is not completed (or
// not yet created); each begins with the summaries of those before it
// among its recent sessions.

// maxSegments bounds the chain read for one ADK session.
const maxSegments = 10000

// segmentID returns the id of the n-th memory session of an ADK session.
func segmentID(sessionID string, n int) string {
	if n <= 1 {
		return sessionID
	}
	suffix := "~" + strconv.Itoa(n)
	base := sessionID
	if len(base)+len(suffix) > store.MaxIDBytes {
		sum := sha256.Sum256([]byte(sessionID))
		base = "adk-" + hex.EncodeToString(sum[:16])
	}
	return base + suffix
}

// chain is what memory holds of one ADK session.
type chain struct {
	// open is the id of the memory session new turns go to.
	open string
	// last is the id of the latest memory session that exists, or "".
	last string
	// stored holds the ids of the messages stored in any of them, when
	// asked for.
	stored map[string]bool
}

// readChain reads the memory sessions of an ADK session, and with
// messages the ids of the messages they hold.
func (m *Memory) readChain(ctx context.Context, userID, sessionID string, messages bool) (chain, error) {
	c := chain{}
	if messages {
		c.stored = map[string]bool{}
	}
	for n := 1; n <= maxSegments; n++ {
		id := segmentID(sessionID, n)
		doc, err := m.st.GetSession(ctx, userID, id)
		if errors.Is(err, store.ErrNotFound) {
			if c.open == "" {
				c.open = id
			}
			return c, nil
		}
		if err != nil {
			return c, fmt.Errorf("read memory session %s: %w", id, err)
		}
		c.last = id
		if doc.Status != store.SessionCompleted && c.open == "" {
			c.open = id
		}
		if !messages {
			if c.open != "" {
				return c, nil
			}
			continue
		}
		turns, err := m.st.ListTurns(ctx, userID, id, 0)
		if err != nil {
			return c, fmt.Errorf("read turns of memory session %s: %w", id, err)
		}
		for _, t := range turns {
			for _, msg := range t.Messages {
				c.stored[msg.ID] = true
			}
		}
	}
	return c, fmt.Errorf("ADK session %s has more than %d memory sessions", sessionID, maxSegments)
}

// openSession returns the agentmemory session new turns of an ADK session
// go to.
func (m *Memory) openSession(ctx context.Context, userID, sessionID string) (*amagent.Session, error) {
	if err := checkIDs(userID, sessionID); err != nil {
		return nil, err
	}
	c, err := m.readChain(ctx, userID, sessionID, false)
	if err != nil {
		return nil, fmt.Errorf("adk: %w", err)
	}
	return amagent.NewSession(c.open, userID)
}

// checkIDs checks that an ADK user and session id are usable as
// agentmemory's.
func checkIDs(userID, sessionID string) error {
	if err := amagent.ValidateUserID(userID); err != nil {
		return fmt.Errorf("adk: ADK user id %q: %w", userID, err)
	}
	if err := store.CheckID("session id", sessionID); err != nil {
		return fmt.Errorf("adk: ADK session id %q: %w", sessionID, err)
	}
	return nil
}
