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
func sanitise(text string) string { return matchExpr(queryWords(text)) }

// queryWords returns the words of sanitise's MATCH expression, in order.
func queryWords(text string) []string {
	var (
		words []string
		seen  = make(map[string]bool)
	)
	word := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) }
	for tok := range strings.FieldsFuncSeq(text, func(r rune) bool { return !word(r) }) {
		key := strings.ToLower(tok)
		if seen[key] {
			continue
		}
		seen[key] = true
		words = append(words, tok)
		if len(words) == maxQueryTokens {
			break
		}
	}
	return words
}

// matchExpr quotes words and ORs them.
func matchExpr(words []string) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteString(" OR ")
		}
		// w holds no '"' (not a word character), so it needs no escaping.
		b.WriteByte('"')
		b.WriteString(w)
		b.WriteByte('"')
	}
	return b.String()
}
