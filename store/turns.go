package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

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
