package offline

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentmemory/agentmemory/internal/lexis"
)

// entity is a span of a sentence recognised as an entity.
type entity struct {
	text       string
	start, end int
	product    bool // an account or product name, also a topic
}

// asWrittenLower names an entity by its lower-cased text.
const asWrittenLower = "\x00lower"

// Entity patterns, tried in this order; an earlier match claims its span.
//
// Each has a clue: a literal that every match of it contains, compared
// case-insensitively unless the pattern is case-sensitive, so that a
// sentence without the clue skips the pattern. Running every pattern over
// every sentence was most of the CPU a summary costs. A clue holds no
// 'k' or 's': Unicode case folding matches those letters of a (?i)
// pattern with the Kelvin sign and the long s, which lower-casing the
// sentence does not give. TestCluesSkipOnlySentencesWithoutMatches checks
// the clues against the patterns.
var (
	productPatterns = []entityPattern{
		entityRE(`(?i)\broth\s+401\s?\(?k\)?`, "401", "Roth 401k"),
		entityRE(`(?i)\b401\s?\(?k\)?`, "401", "401k"),
		entityRE(`(?i)\b403\s?\(?b\)?`, "403", "403b"),
		entityRE(`(?i)\b457\s?\(?b\)?`, "457", "457b"),
		entityRE(`(?i)\broth\s+iras?\b`, "ira", "Roth IRA"),
		entityRE(`(?i)\bsep[\s-]iras?\b`, "ira", "SEP IRA"),
		entityRE(`(?i)\btraditional\s+iras?\b`, "ira", "traditional IRA"),
		entityRE(`(?i)\brollover\s+iras?\b`, "ira", "rollover IRA"),
		entityRE(`\bIRAs?\b`, "IRA", "IRA"),
		entityRE(`\bHSAs?\b`, "HSA", "HSA"),
		entityRE(`(?i)\b529\s+plans?\b`, "529", "529 plan"),
		entityRE(`\bETFs?\b`, "ETF", "ETF"),
		entityRE(`(?i)\bindex\s+funds?\b`, "index", "index fund"),
		entityRE(`(?i)\bmutual\s+funds?\b`, "mutual", "mutual fund"),
		entityRE(`(?i)\btarget[\s-]date\s+funds?\b`, "target", "target-date fund"),
		entityRE(`(?i)\bemergency\s+funds?\b`, "emergency", "emergency fund"),
		entityRE(`(?i)\b(?:brokerage|savings|checking|retirement)\s+accounts?\b`, "account", asWrittenLower),
		entityRE(`(?i)\bannuit(?:y|ies)\b`, "annuit", "annuity"),
		entityRE(`(?i)\bsocial\s+security\b`, "ecurity", "Social Security"),
		entityRE(`(?i)\bS&P\s?500\b`, "500", "S&P 500"),
		entityRE(`(?i)\bmortgages?\b`, "mortgage", "mortgage"),
	}
	// Amounts, durations and dates: every match holds a digit.
	valuePatterns = []entityPattern{
		entityRE(`(?i)(?:[$€£]|\bUSD\s?|\bEUR\s?)\d[\d,]*(?:\.\d+)?(?:\s?(?:k|m|bn|million|billion|thousand)\b)?|\b\d[\d,]*(?:\.\d+)?(?:\s?%|\s(?:percent|dollars|euros|pounds)\b)`, anyDigit, ""),
		entityRE(`(?i)\b\d[\d,]*(?:\.\d+)?[\s-](?:years?|yrs?|months?|weeks?|days?|hours?|shares?)(?:\s+old)?\b|\bage\s\d{1,3}\b`, anyDigit, ""),
		entityRE(`\b(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?\s\d{1,2}(?:st|nd|rd|th)?(?:,?\s\d{4})?\b|\b(?:19|20)\d{2}\b`, anyDigit, ""),
	}
	joinName = map[string]bool{"of": true, "and": true, "&": true, "de": true, "van": true, "von": true}
)

// entityPattern is a pattern of entities: re, tried only on sentences
// holding clue, names its matches name (as written, whitespace collapsed,
// when name is empty; lower-cased too when it is asWrittenLower).
type entityPattern struct {
	re   *regexp.Regexp
	clue string
	fold bool // the pattern ignores case, and the clue is lower-case
	name string
}

// entityRE compiles an entity pattern.
func entityRE(expr, clue, name string) entityPattern {
	return entityPattern{re: regexp.MustCompile(expr), clue: clue, fold: strings.HasPrefix(expr, "(?i)"), name: name}
}

// anyDigit is the clue of patterns whose matches hold an ASCII digit.
const anyDigit = "\x00digit"

// mayMatch reports whether p may match text, lower being text
// lower-cased: whether text holds its clue.
func (p entityPattern) mayMatch(text, lower string) bool {
	switch {
	case p.clue == anyDigit:
		return strings.ContainsAny(text, "0123456789")
	case p.fold:
		return strings.Contains(lower, p.clue)
	default:
		return strings.Contains(text, p.clue)
	}
}

// findEntities returns the entities of one sentence, by position.
func findEntities(text string, toks []token) []entity {
	return entitiesOf(text, toks, productPatterns, valuePatterns)
}

// entitiesOf is findEntities with the patterns of products and values
// given.
func entitiesOf(text string, toks []token, products, values []entityPattern) []entity {
	var ents []entity
	claimed := func(st, e int) bool {
		for _, x := range ents {
			if st < x.end && x.start < e {
				return true
			}
		}
		return false
	}
	// addAll adds the matches of p not claimed yet.
	lower := strings.ToLower(text)
	addAll := func(p entityPattern) {
		if !p.mayMatch(text, lower) {
			return
		}
		name := p.name
		for _, m := range p.re.FindAllStringIndex(text, -1) {
			if claimed(m[0], m[1]) {
				continue
			}
			t := name
			switch name {
			case "":
				t = collapse(text[m[0]:m[1]])
			case asWrittenLower:
				t = strings.ToLower(collapse(text[m[0]:m[1]]))
			}
			ents = append(ents, entity{text: t, start: m[0], end: m[1]})
		}
	}
	for _, p := range products {
		addAll(p)
	}
	for i := range ents {
		ents[i].product = true
	}
	for _, p := range values {
		addAll(p)
	}
	ents = append(ents, names(text, toks, claimed)...)
	slices.SortStableFunc(ents, func(a, b entity) int { return a.start - b.start })
	return ents
}

// names finds runs of capitalised words ("Fidelity", "Bank of America").
// Leading stopwords, greetings and interjections ("The", "My", "Hey",
// "Wow") are dropped from a run; a run that starts the sentence counts only
// with two words or more before they are dropped ("Hey Sarah" gives
// "Sarah").
func names(text string, toks []token, claimed func(int, int) bool) []entity {
	var out []entity
	for i := 0; i < len(toks); {
		if !nameWord(toks[i]) || claimed(toks[i].start, toks[i].end) {
			i++
			continue
		}
		j := i + 1
		for j < len(toks) {
			if claimed(toks[j].start, toks[j].end) || !onlySpaceBetween(text, toks[j-1], toks[j]) {
				break
			}
			if nameWord(toks[j]) {
				j++
				continue
			}
			if joinName[toks[j].norm] && j+1 < len(toks) && nameWord(toks[j+1]) && onlySpaceBetween(text, toks[j], toks[j+1]) {
				j += 2
				continue
			}
			break
		}
		run := toks[i:j]
		atStart := i == 0
		for len(run) > 0 && (lexis.IsStopword(run[0].norm) || isSocial(run[0].norm) || isInterjection(run[0].norm)) {
			run, atStart = run[1:], false
		}
		if len(run) > 0 && !(atStart && len(run) < 2) {
			out = append(out, entity{text: text[run[0].start:run[len(run)-1].end], start: run[0].start, end: run[len(run)-1].end})
		}
		i = j
	}
	return out
}

// nameWord reports a capitalised word that may be part of a name.
func nameWord(tk token) bool {
	r, _ := utf8.DecodeRuneInString(tk.surface)
	if !unicode.IsUpper(r) {
		return false
	}
	switch tk.norm {
	case "i", "im", "ive", "id", "ill", "ok", "okay":
		return false
	}
	return true
}
