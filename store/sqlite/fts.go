package sqlite

import (
	"strings"
	"unicode"
)

// maxQueryTokens caps the words of a full-text query.
const maxQueryTokens = 64

// sanitise turns any user text into a safe FTS5 MATCH expression: its
// words (maximal runs of letters, digits and combining marks) each quoted as
// a string literal and OR-ed, duplicates (ignoring case) and words past
// maxQueryTokens dropped. Nothing else survives, so no input can be a syntax
// error or reach an FTS5 operator, column filter or prefix query. It
// returns "" when the text has no word.
func sanitise(text string) string {
	var (
		b    strings.Builder
		seen = make(map[string]bool)
		n    int
	)
	word := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) }
	for tok := range strings.FieldsFuncSeq(text, func(r rune) bool { return !word(r) }) {
		key := strings.ToLower(tok)
		if seen[key] {
			continue
		}
		seen[key] = true
		if n > 0 {
			b.WriteString(" OR ")
		}
		// tok holds no '"' (not a word character), so it needs no escaping.
		b.WriteByte('"')
		b.WriteString(tok)
		b.WriteByte('"')
		if n++; n == maxQueryTokens {
			break
		}
	}
	return b.String()
}
