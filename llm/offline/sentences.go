package offline

import (
	"strings"
	"unicode/utf8"

	"github.com/agentmemory/agentmemory/internal/lexis"
)

// wtok is a word of a sentence as written, with its lower-case form
// (curly apostrophes made straight).
type wtok struct {
	low        string
	start, end int
}

func wordsOf(s string) []wtok {
	var out []wtok
	for st, e := range lexis.WordSpans(s) {
		out = append(out, wtok{low: strings.ReplaceAll(strings.ToLower(s[st:e]), "’", "'"), start: st, end: e})
	}
	return out
}

var (
	// questionStarts are the first words of a question without its mark.
	questionStarts = set("what", "whats", "how", "why", "when", "where", "which", "who", "whom", "whose", "should",
		"shall", "can", "could", "would", "will", "do", "does", "did", "is", "are", "am", "was", "were", "have",
		"has", "may", "might", "isnt", "arent", "dont", "doesnt", "cant", "wont")
	// notLasting are phrases (normalised words) of requests, deferrals and
	// the moment: what the user asks for or will do today is no lasting fact.
	notLasting = []string{"want to know", "like to know", "need to know", "wondering", "wonder if", "wonder whether",
		"curious", "tell me", "explain", "show me", "can you", "could you", "would you", "will you",
		"think about it", "think it over", "look into it", "get back to you", "let you know",
		"today", "todays", "tomorrow", "tomorrows", "tonight", "tonights"}
	// leadWords may open a sentence before its subject ("Well, I…").
	leadWords = set("well", "also", "and", "but", "so", "oh", "ok", "okay", "yes", "yeah", "honestly", "actually",
		"hi", "hello", "hey", "um", "anyway", "plus", "besides", "personally", "frankly", "right", "sure", "no")
	// adverbs may stand between the subject and its verb ("I really want").
	adverbs = set("also", "really", "just", "still", "usually", "always", "never", "only", "already", "definitely",
		"actually", "currently", "mostly", "often", "generally", "probably", "even", "recently", "certainly",
		"honestly", "sometimes", "rarely", "seriously", "absolutely", "truly", "typically", "normally", "mainly")
	// auxiliaries are the verbs of being, having, doing and the modals.
	auxiliaries = set("am", "is", "are", "was", "were", "be", "been", "have", "has", "had", "do", "does", "did",
		"don't", "doesn't", "didn't", "can", "can't", "cannot", "could", "couldn't", "will", "won't", "would",
		"wouldn't", "should", "shouldn't", "might", "must", "haven't", "hasn't", "hadn't", "isn't", "aren't",
		"wasn't", "weren't", "'m", "'re", "'ve")
	// presentVerbs are the lexical verbs a statement about oneself uses,
	// in their base form; thirdPerson conjugates only these.
	presentVerbs = set("want", "plan", "hope", "need", "prefer", "like", "love", "hate", "enjoy", "earn", "make",
		"save", "own", "rent", "live", "work", "worry", "fear", "feel", "think", "expect", "intend", "keep", "pay",
		"spend", "invest", "owe", "get", "buy", "sell", "contribute", "aim", "wish", "care", "mind", "dislike",
		"teach", "manage", "run", "hold", "support", "travel", "drive", "study", "rely", "receive", "volunteer",
		"value", "trust", "tend", "struggle", "know", "believe", "dream", "commute", "budget", "take", "use",
		"share", "cover", "handle", "retire", "start", "stop", "quit", "change", "move", "lose", "try", "favor",
		"favour", "avoid", "panic", "stress", "lean", "carry", "have", "do", "go", "max")
	// wouldVerbs follow "I'd" meaning "I would".
	wouldVerbs = set("like", "love", "rather", "prefer", "hate", "want", "be", "need", "enjoy")
	// otherPersons rule out the third-person rewrite: a second
	// first-person subject, a "we" or a "you" after the start.
	otherPersons = set("i", "i'm", "i've", "i'll", "i'd", "we", "we're", "we've", "we'll", "we'd", "us", "our",
		"ours", "ourselves", "you", "your", "yours", "you're", "you've", "you'll", "you'd", "yourself", "yourselves")
	// objectPronouns are rewritten after the subject.
	objectPronouns = map[string]string{"my": "their", "me": "them", "myself": "themselves", "mine": "theirs"}
)

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// statesLastingFact reports whether sentence s is a first-person statement
// (not a question, request, deferral or remark about the day).
func statesLastingFact(s string) bool {
	if strings.ContainsAny(s, "?？") {
		return false
	}
	toks := wordsOf(s)
	k := 0
	for k < len(toks) && leadWords[toks[k].low] {
		k++
	}
	if k == len(toks) || questionStarts[strings.ReplaceAll(toks[k].low, "'", "")] {
		return false
	}
	norm := " " + strings.Join(lexis.Words(s), " ") + " "
	for _, p := range notLasting {
		if strings.Contains(norm, " "+p+" ") {
			return false
		}
	}
	for i, t := range toks {
		switch t.low {
		case "i'm", "i've", "i'll", "i'd", "we're", "we've", "we'll", "we'd":
			return true
		case "i", "we":
			j := i + 1
			for j < len(toks) && adverbs[toks[j].low] {
				j++
			}
			if j < len(toks) && isVerbForm(toks[j].low) {
				return true
			}
		case "my", "our":
			for _, u := range toks[i+1:] {
				if isVerbForm(u.low) {
					return true
				}
			}
		}
	}
	return false
}

// isVerbForm reports whether w (lower case) is an auxiliary or a form of
// one of presentVerbs, or looks like a past tense.
func isVerbForm(w string) bool {
	if auxiliaries[w] || presentVerbs[w] {
		return true
	}
	if b, ok := lexis.BaseForm(w); ok && presentVerbs[b] {
		return true
	}
	for _, suf := range []struct{ cut, add string }{{"ies", "y"}, {"es", ""}, {"s", ""}, {"ied", "y"}, {"ed", ""}, {"ed", "e"}, {"d", ""}, {"ing", ""}, {"ing", "e"}} {
		if stem, ok := strings.CutSuffix(w, suf.cut); ok && presentVerbs[stem+suf.add] {
			return true
		}
	}
	return pastTense(w)
}

// pastTense reports a regular past ("retired", "started") or an irregular
// one lexis knows ("sold", "bought").
func pastTense(w string) bool {
	if _, ok := lexis.BaseForm(w); ok {
		return true
	}
	return len(w) > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed") && strings.IndexFunc(w, func(r rune) bool { return r < 'a' || r > 'z' }) < 0
}

// thirdPerson rewrites a first-person sentence in the third person when
// the rewrite is safe: the sentence (after a lead word such as "Well,")
// starts with "I", "I'm", "I've", "I'll", "I'd" or "My", the verb after
// "I" is one it can conjugate, and no other first- or second-person
// subject follows. ok is false otherwise.
func thirdPerson(s string) (string, bool) {
	toks := wordsOf(s)
	k := 0
	for k < len(toks)-1 && leadWords[toks[k].low] {
		k++
	}
	if k == len(toks) {
		return "", false
	}
	if k > 0 {
		s = s[toks[k].start:]
		toks = wordsOf(s)
	}
	for _, t := range toks[1:] {
		if otherPersons[t.low] {
			return "", false
		}
	}
	var b strings.Builder
	rest := toks[0].end
	switch toks[0].low {
	case "my":
		b.WriteString("The user's")
	case "i'm":
		b.WriteString("The user is")
	case "i've":
		b.WriteString("The user has")
	case "i'll":
		b.WriteString("The user will")
	case "i'd":
		j := skipAdverbs(toks, 1)
		if j == len(toks) || !wouldVerbs[toks[j].low] {
			return "", false
		}
		b.WriteString("The user would")
	case "i":
		j := skipAdverbs(toks, 1)
		if j == len(toks) {
			return "", false
		}
		v, ok := conjugate(toks[j].low)
		if !ok {
			return "", false
		}
		b.WriteString("The user")
		b.WriteString(s[toks[0].end:toks[j].start])
		b.WriteString(v)
		rest = toks[j].end
	default:
		return "", false
	}
	pos := rest
	for _, t := range toks {
		if t.start < rest {
			continue
		}
		if rep, ok := objectPronouns[t.low]; ok {
			b.WriteString(s[pos:t.start])
			b.WriteString(rep)
			pos = t.end
		}
	}
	b.WriteString(s[pos:])
	return sentenceEnd(b.String()), true
}

func skipAdverbs(toks []wtok, j int) int {
	for j < len(toks) && adverbs[toks[j].low] {
		j++
	}
	return j
}

// conjugate returns the third-person form of a verb that followed "I".
func conjugate(v string) (string, bool) {
	switch v {
	case "am":
		return "is", true
	case "have":
		return "has", true
	case "haven't":
		return "hasn't", true
	case "do":
		return "does", true
	case "don't":
		return "doesn't", true
	case "go":
		return "goes", true
	case "was", "wasn't", "had", "hadn't", "did", "didn't", "can", "can't", "cannot", "could", "couldn't",
		"will", "won't", "would", "wouldn't", "should", "shouldn't", "might", "must":
		return v, true
	}
	if presentVerbs[v] {
		switch {
		case strings.HasSuffix(v, "y") && len(v) > 1 && !strings.ContainsRune("aeiou", rune(v[len(v)-2])):
			return v[:len(v)-1] + "ies", true
		case strings.HasSuffix(v, "s") || strings.HasSuffix(v, "sh") || strings.HasSuffix(v, "ch") ||
			strings.HasSuffix(v, "x") || strings.HasSuffix(v, "z") || strings.HasSuffix(v, "o"):
			return v + "es", true
		}
		return v + "s", true
	}
	if pastTense(v) {
		return v, true
	}
	return "", false
}

// sentenceEnd ends s with a full stop: an exclamation becomes one, and one
// is added when s has no final mark.
func sentenceEnd(s string) string {
	s = strings.TrimSpace(s)
	if t := strings.TrimRight(s, "!！"); t != s {
		return t + "."
	}
	if r, _ := utf8.DecodeLastRuneInString(s); !strings.ContainsRune(".?…\"”)", r) {
		return s + "."
	}
	return s
}
