package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Turn validates t for userID before AppendTurn, filling an empty UserID.
func (v Validator) Turn(userID string, t *Turn) error {
	if t == nil {
		return fmt.Errorf("%w: nil turn", ErrInvalid)
	}
	if err := owner(userID, &t.UserID); err != nil {
		return err
	}
	if err := CheckID("session id", t.SessionID); err != nil {
		return err
	}
	if err := CheckID("turn id", t.ID); err != nil {
		return err
	}
	if len(t.Messages) == 0 {
		return fmt.Errorf("%w: turn %s: no messages", ErrInvalid, t.ID)
	}
	if t.Seq < 0 {
		return fmt.Errorf("%w: turn %s: negative seq %d", ErrInvalid, t.ID, t.Seq)
	}
	return size("turn "+t.ID, t)
}

// TurnID returns the id of a turn that has none: derived from its message
// ids, so that the same messages recorded twice are one turn. It returns ""
// when a message has no id.
func TurnID(t *Turn) string {
	h := sha256.New()
	for _, m := range t.Messages {
		if m.ID == "" {
			return ""
		}
		fmt.Fprintf(h, "%s\x00", m.ID)
	}
	return "turn-" + hex.EncodeToString(h.Sum(nil)[:16])
}

// ChunkID returns the id of the interaction that starts at turn first of a
// session. It does not depend on where the chunk ends, so a chunk stored
// short (by an interrupted end of session) and later stored whole is one
// document, replaced, never two.
func ChunkID(sessionID string, first int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d", sessionID, first))
	return "int-" + hex.EncodeToString(sum[:16])
}
