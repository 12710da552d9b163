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
var (
	productPatterns = []struct {
		re   *regexp.Regexp
		name string
	}{
		{regexp.MustCompile(`(?i)\broth\s+401\s?\(?k\)?`), "Roth 401k"},
		{regexp.MustCompile(`(?i)\b401\s?\(?k\)?`), "401k"},
		{regexp.MustCompile(`(?i)\b403\s?\(?b\)?`), "403b"},
		{regexp.MustCompile(`(?i)\b457\s?\(?b\)?`), "457b"},
		{regexp.MustCompile(`(?i)\broth\s+iras?\b`), "Roth IRA"},
		{regexp.MustCompile(`(?i)\bsep[\s-]iras?\b`), "SEP IRA"},
		{regexp.MustCompile(`(?i)\btraditional\s+iras?\b`), "traditional IRA"},
		{regexp.MustCompile(`(?i)\brollover\s+iras?\b`), "rollover IRA"},
		{regexp.MustCompile(`\bIRAs?\b`), "IRA"},
		{regexp.MustCompile(`\bHSAs?\b`), "HSA"},
		{regexp.MustCompile(`(?i)\b529\s+plans?\b`), "529 plan"},
		{regexp.MustCompile(`\bETFs?\b`), "ETF"},
		{regexp.MustCompile(`(?i)\bindex\s+funds?\b`), "index fund"},
		{regexp.MustCompile(`(?i)\bmutual\s+funds?\b`), "mutual fund"},
		{regexp.MustCompile(`(?i)\btarget[\s-]date\s+funds?\b`), "target-date fund"},
		{regexp.MustCompile(`(?i)\bemergency\s+funds?\b`), "emergency fund"},
		{regexp.MustCompile(`(?i)\b(?:brokerage|savings|checking|retirement)\s+accounts?\b`), asWrittenLower},
		{regexp.MustCompile(`(?i)\bannuit(?:y|ies)\b`), "annuity"},
		{regexp.MustCompile(`(?i)\bsocial\s+security\b`), "Social Security"},
		{regexp.MustCompile(`(?i)\bS&P\s?500\b`), "S&P 500"},
		{regexp.MustCompile(`(?i)\bmortgages?\b`), "mortgage"},
	}
	moneyRE  = regexp.MustCompile(`(?i)(?:[$€£]|\bUSD\s?|\bEUR\s?)\d[\d,]*(?:\.\d+)?(?:\s?(?:k|m|bn|million|billion|thousand)\b)?|\b\d[\d,]*(?:\.\d+)?(?:\s?%|\s(?:percent|dollars|euros|pounds)\b)`)
	unitRE   = regexp.MustCompile(`(?i)\b\d[\d,]*(?:\.\d+)?[\s-](?:years?|yrs?|months?|weeks?|days?|hours?|shares?)(?:\s+old)?\b|\bage\s\d{1,3}\b`)
	dateRE   = regexp.MustCompile(`\b(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?\s\d{1,2}(?:st|nd|rd|th)?(?:,?\s\d{4})?\b|\b(?:19|20)\d{2}\b`)
	joinName = map[string]bool{"of": true, "and": true, "&": true, "de": true, "van": true, "von": true}
)

// findEntities returns the entities of one sentence, by position.
func findEntities(text string, toks []token) []entity {
	var ents []entity
	claimed := func(st, e int) bool {
		for _, x := range ents {
			if st < x.end && x.start < e {
				return true
			}
		}
		return false
	}
	// addAll adds the matches of re, named name, or as written (whitespace
	// collapsed) when name is empty, lower-cased when name is asWrittenLower.
	addAll := func(re *regexp.Regexp, name string) {
		for _, m := range re.FindAllStringIndex(text, -1) {
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
	for _, p := range productPatterns {
		addAll(p.re, p.name)
	}
	for i := range ents {
		ents[i].product = true
	}
	addAll(moneyRE, "")
	addAll(unitRE, "")
	addAll(dateRE, "")
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
