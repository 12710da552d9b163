package offline

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agentmemory/agentmemory/agent"
)

// MarkerPrefix starts every prompt marker. A marker is MarkerPrefix
// followed by the prompt's name, e.g. "agentmemory:prompt=cumulative_summary".
const MarkerPrefix = "agentmemory:prompt="

// MaxNameLen is the longest prompt name.
const MaxNameLen = 64

// ErrMalformedMarker reports a message that starts with MarkerPrefix but
// does not carry a valid marker.
var ErrMalformedMarker = errors.New("offline: malformed prompt marker")

// ValidName reports whether name can name a prompt: 1 to MaxNameLen
// characters, a lower-case ASCII letter or digit first, then lower-case
// ASCII letters, digits, '_', '.' or '-'.
func ValidName(name string) bool {
	if name == "" || len(name) > MaxNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case i > 0 && (c == '_' || c == '.' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// Marker returns the marker text a prompt template named name embeds, on a
// line of its own, as the first line of its system message (or of its
// first message). It panics if name is not ValidName: names are constants
// chosen by the template's author.
func Marker(name string) string {
	if !ValidName(name) {
		panic(fmt.Sprintf("offline.Marker: invalid prompt name %q", name))
	}
	return MarkerPrefix + name
}

// ParseMarker looks for a marker on the first non-blank line of text. That
// line must consist of MarkerPrefix, a valid name and nothing else but
// surrounding spaces or tabs. It returns found=false and no error when the
// line does not start with MarkerPrefix, and ErrMalformedMarker (wrapped)
// when it does but the rest is not a valid name.
func ParseMarker(text string) (name string, found bool, err error) {
	line := firstLine(text)
	rest, ok := strings.CutPrefix(line, MarkerPrefix)
	if !ok {
		return "", false, nil
	}
	if !ValidName(rest) {
		shown := rest
		if len(shown) > MaxNameLen+8 {
			shown = shown[:MaxNameLen+8] + "…"
		}
		return "", true, fmt.Errorf("%w: %q is not a valid prompt name", ErrMalformedMarker, shown)
	}
	return rest, true, nil
}

// firstLine returns the first line of text that is not blank, trimmed of
// spaces, tabs and carriage returns.
func firstLine(text string) string {
	for text != "" {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		if line = strings.Trim(line, " \t\r"); line != "" {
			return line
		}
	}
	return ""
}

// FindMarker returns the prompt marker of a request's messages: the first
// one found on the first line of a system message, in order, or else on the
// first line of the first message whatever its role. Later user, assistant
// and tool messages are never searched, so what a user types in a chat
// cannot route the request to a prompt handler.
func FindMarker(msgs []agent.Message) (name string, found bool, err error) {
	for i, m := range msgs {
		if m.Role != agent.RoleSystem && i != 0 {
			continue
		}
		name, found, err = ParseMarker(m.Text)
		if found {
			if err != nil {
				return "", true, fmt.Errorf("message %d: %w", i, err)
			}
			return name, true, nil
		}
	}
	return "", false, nil
}
