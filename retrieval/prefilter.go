package retrieval

import (
	"regexp"
	"strings"
	"unicode"
)

// personalRE finds words that refer to the user or to a shared past: a
// message with one of them always searches memory.
var personalRE = regexp.MustCompile(`(?i)\b(i|me|my|mine|myself|i'm|i've|i'll|i'd|we|us|our|ours|remember|recall|last time|previously|earlier|before)\b`)

// socialRE matches a clause that is only a greeting, thanks, goodbye or
// acknowledgement.
var socialRE = regexp.MustCompile(`(?i)^(hi|hello|hey|howdy|good (morning|afternoon|evening)|thanks|thank you|thx|ty|cheers|bye|goodbye|see you|see ya|ok|okay|k|sure|yes|yep|yeah|no|nope|great|cool|nice|got it|sounds good|perfect|awesome|(that|this) (helps|helped|is helpful|was helpful|makes sense)|that's (helpful|great|perfect|clear)|makes sense|good to know|appreciate it|much appreciated|understood|noted|will do|all good)( there| so much| again| a lot| very much)?$`)

// NeedsMemory is the pre-filter: it reports whether a user message should
// search memory. A message whose every clause is a greeting, thanks or
// acknowledgement ("Thanks, that helps a lot.") does not, nor does one
// without letters or digits; a message that refers to the user (I, my,
// we, remember…) always does; anything else does too, because missing
// context costs more than a search.
func NeedsMemory(text string) bool {
	text = strings.TrimSpace(text)
	if !strings.ContainsFunc(text, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
		return false
	}
	if personalRE.MatchString(text) {
		return true
	}
	clauses := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return r == ',' || r == '.' || r == '!' || r == '?' || r == ';' || r == ':' || r == '\n'
	})
	for _, c := range clauses {
		bare := strings.TrimFunc(strings.Join(strings.Fields(c), " "), func(r rune) bool {
			return unicode.IsPunct(r) || unicode.IsSymbol(r) || unicode.IsSpace(r)
		})
		if bare != "" && !socialRE.MatchString(bare) {
			return true
		}
	}
	return false
}

// vagueRE finds follow-ups that lean on the conversation for their subject.
var vagueRE = regexp.MustCompile(`(?i)^(and|but|so|also|what about|how about|and what|how much|how many|when|why|which one|that|this|it|those|these|they)\b|\b(it|that|this|those|these|them|they|there|the same|one)\b[?.!]*$`)

// IsVague reports whether a message probably needs the conversation to be
// understood: short, or opening or ending on a word that points back
// ("And when?", "How much was it?").
func IsVague(text string) bool {
	text = strings.TrimSpace(text)
	return len(strings.Fields(text)) <= 3 || vagueRE.MatchString(text)
}
