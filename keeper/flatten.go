package keeper

import (
	"strings"
	"time"

	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/store"
)

// Flatten renders turns as interaction content: one "speaker: text" line
// per message, the speaker being the message's name or else its role.
func Flatten(turns []store.Turn) string {
	var b strings.Builder
	for _, t := range turns {
		for _, m := range t.Messages {
			if strings.TrimSpace(m.Content) == "" {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(speaker(m))
			b.WriteString(": ")
			b.WriteString(strings.TrimSpace(m.Content))
		}
	}
	return b.String()
}

func speaker(m store.TurnMessage) string {
	if m.Name != "" {
		return m.Name
	}
	return m.Role
}

func promptTurns(turns []store.Turn) []prompts.Turn {
	var out []prompts.Turn
	for _, t := range turns {
		for _, m := range t.Messages {
			out = append(out, prompts.Turn{Role: speaker(m), Text: m.Content})
		}
	}
	return out
}

// timeOf formats a time for the context: date and minute, UTC.
func timeOf(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }
