package keeper

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentmemory/agentmemory/store"
)

// Size limits. Turns are stored whole up to these; beyond them content is
// cut, never dropped, with a marker and the original size recorded
// (TurnMessage.OriginalBytes).
const (
	// MaxMessageBytes caps one message of a stored turn.
	MaxMessageBytes = 256 << 10
	// MaxMetadataBytes caps one metadata value of a stored turn (a tool
	// call trace, say).
	MaxMetadataBytes = 64 << 10
	// MaxInteractionContentBytes caps an interaction document's content:
	// each message gets an equal share, cut with a marker; the turns keep
	// the full text.
	MaxInteractionContentBytes = 256 << 10
	// maxEmbedBytes caps the text sent to the embedder for an interaction's
	// content vector (embedding models take a few thousand tokens).
	maxEmbedBytes = 24 << 10
	// turnBudget is what FitTurn keeps a turn's JSON encoding under, with
	// room below store.MaxDocumentBytes.
	turnBudget = store.MaxDocumentBytes - 16<<10
)

// Cut returns s cut to at most max bytes at a rune boundary, with a marker
// naming the original length, and whether it cut.
func Cut(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	marker := fmt.Sprintf(" […cut: %d bytes in all]", len(s))
	n := max - len(marker)
	if n < 0 {
		n = 0
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + marker, true
}

// FitTurn cuts a turn's messages to MaxMessageBytes and its metadata values
// to MaxMetadataBytes, then, while its encoding is still too large for one
// stored document, halves its longest message. A message cut keeps its
// original length in OriginalBytes.
func FitTurn(t *store.Turn) {
	for i := range t.Messages {
		fitMessage(&t.Messages[i], MaxMessageBytes)
	}
	for k, v := range t.Metadata {
		if c, cut := Cut(v, MaxMetadataBytes); cut {
			t.Metadata[k] = c
		}
	}
	for range 64 {
		b, err := json.Marshal(t)
		if err != nil || len(b) <= turnBudget {
			return
		}
		longest := 0
		for i, m := range t.Messages {
			if len(m.Content) > len(t.Messages[longest].Content) {
				longest = i
			}
		}
		if len(t.Messages[longest].Content) < 64 {
			return // the metadata or the ids are what is large: the store refuses it
		}
		fitMessage(&t.Messages[longest], len(t.Messages[longest].Content)/2)
	}
}

func fitMessage(m *store.TurnMessage, max int) {
	orig := len(m.Content)
	if m.OriginalBytes > 0 {
		orig = m.OriginalBytes
	}
	if c, cut := Cut(m.Content, max); cut {
		m.Content, m.OriginalBytes = c, orig
	}
}

// flattenBounded is Flatten with each message cut to an equal share of max
// bytes.
func flattenBounded(turns []store.Turn, max int) string {
	n := 0
	for _, t := range turns {
		n += len(t.Messages)
	}
	if n == 0 {
		return ""
	}
	share := max/n - 64 // room for the speaker and the newline
	cut := make([]store.Turn, len(turns))
	for i, t := range turns {
		cut[i] = t
		cut[i].Messages = make([]store.TurnMessage, len(t.Messages))
		for j, m := range t.Messages {
			m.Content, _ = Cut(strings.TrimSpace(m.Content), share)
			cut[i].Messages[j] = m
		}
	}
	return Flatten(cut)
}

// embedText is the part of an interaction's content its vector is made
// from.
func embedText(content string) string {
	s, _ := Cut(content, maxEmbedBytes)
	return s
}
