package offline

// The reflection prompts' rules: session_reflection, profile_synthesis and
// reconcile answered without a model. Like the other memory handlers they
// read the data blocks of the request's last user message, are
// deterministic, and give answers the prompts package's parsers accept
// unchanged. They are keyword and word-overlap rules, not understanding:
//
//   - session_reflection keeps the sentences of the user's own messages
//     (never the assistant's) that state something in the first person
//     ("I", "I'm", "my", "we", "our"… followed by a statement verb) and are
//     not a question, a request ("can you…", "I'd like to know…"), a
//     deferral ("I'll think about it") or about today or tomorrow, and
//     that hold no secret (a password, PIN, security answer, social
//     security number, credentials or a run of eight or more digits: the
//     prompt forbids recording them).
//     Greetings, thanks and acknowledgements carry no category word and
//     fall out with the next rule. Each sentence gets the offered category
//     its words match best: fixed keyword lists for the six default
//     categories (demographics, financial_goals, risk_profile,
//     current_situation, concern, preference; an age and a money amount
//     count too) and for procedural (how the user wants things done:
//     "always", "step by step", "before", "make sure"…; it loses a tie to
//     any default), and, for any other category, the content words of its
//     name and description. A sentence matching none is skipped. The
//     insight is the sentence in the third person when a simple rewrite is
//     safe (one first-person subject at the start: "I'm 42" → "The user is
//     42", "I want" → "The user wants", "my" → "their"); otherwise it is
//     quoted: `The user said: "…"`. Confidence is 0.8, 0.9 with a figure
//     or a month; importance is high for financial_goals, risk_profile and
//     concern, medium otherwise. Repeats are dropped, the high-importance
//     insights come first and at most prompts.MaxInsights are kept. The
//     rules do not infer anything unsaid, resolve "last week" to a date,
//     merge facts spread over sentences or notice that the user changed
//     their mind.
//   - profile_synthesis keeps the current profile's sentences and adds the
//     new insights' texts, grouped by category in a fixed order (the six
//     defaults, then other categories by name, then the uncategorised).
//     Two insights of one category with heavily overlapping content words
//     (Jaccard ≥ 0.6, or the same words with other figures: "retire at 60"
//     and "retire at 65") are taken to say the same thing or to contradict
//     each other, and the newer one wins (at the same date the more
//     confident); a profile sentence is replaced the same way by an
//     insight of its category, and an insight the profile already states
//     is not repeated. Over prompts.ProfileWords words, the oldest material
//     goes first: the current profile's sentences from its end, then the
//     oldest insights. It does not rewrite, summarise or reconcile beyond
//     that rule.
//   - reconcile groups near-duplicates: insights of the same category whose
//     content terms (lexis.Terms, without "user" and "said", which every
//     insight shares) have a Jaccard similarity of at least 0.6 with every
//     other member of the group; the merged text is the group's longest
//     text (the newest on a tie), which may leave out a detail only a
//     shorter one held. It reports no contradictions: telling a changed
//     fact from an added one needs understanding that word overlap does
//     not give.

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/lexis"
	"github.com/agentmemory/agentmemory/prompts"
)

// Rules of the reflection handlers.
const (
	confidencePlain  = 0.8
	confidenceFigure = 0.9
	// overlapJaccard is the content-word overlap at which two profile
	// statements of a category say the same thing (or contradict).
	overlapJaccard = 0.6
	// figureJaccard is the overlap of the words other than figures at
	// which two statements with figures are the same statement with a
	// changed figure.
	figureJaccard = 0.75
	// reconcileJaccard is the term overlap of near-duplicate insights.
	reconcileJaccard = 0.6
	// maxQuoteRunes bounds the user's sentence in an insight, leaving room
	// for the lead within prompts.MaxInsightRunes.
	maxQuoteRunes = prompts.MaxInsightRunes - 40
)

// The default insight categories, in the order a profile groups them.
const (
	catDemographics     = "demographics"
	catFinancialGoals   = "financial_goals"
	catRiskProfile      = "risk_profile"
	catCurrentSituation = "current_situation"
	catConcern          = "concern"
	catPreference       = "preference"
	// catProcedural is not a default category: it has keyword rules for
	// when an application offers it (the memory service's procedural
	// memory).
	catProcedural = "procedural"
)

var profileOrder = []string{catDemographics, catFinancialGoals, catRiskProfile, catCurrentSituation, catConcern, catPreference}

// tiePriority breaks a tie between default categories: the more specific
// signal first ("worried about retiring" is a concern).
var tiePriority = []string{catConcern, catFinancialGoals, catRiskProfile, catCurrentSituation, catPreference, catDemographics, catProcedural}

// categoryKeywords are the keyword rules of the default categories, as
// normalised words (lexis.Words: lower case, apostrophes dropped); a
// trailing '*' matches any word with that start. A sentence scores one per
// keyword found.
var categoryKeywords = map[string][]string{
	catDemographics: {"years old", "married", "single", "divorced", "widowed", "wife", "husband", "spouse", "partner",
		"kid", "kids", "child", "children", "son", "sons", "daughter*", "grandchild*", "grandkid*", "family",
		"job", "jobs", "work as", "works as", "worked as", "working as", "retired", "career", "profession*",
		"occupation", "employer", "employed", "self employed", "unemployed", "live in", "living in", "moved to",
		"born", "dependents", "widow*"},
	catFinancialGoals: {"retire", "retiring", "retirement", "retire early", "save for", "saving for", "saving up",
		"goal", "goals", "target", "buy a house", "buy a home", "buy a car", "down payment", "college", "tuition",
		"education", "pay off", "paying off", "debt free", "emergency fund", "nest egg", "financial independence",
		"529", "wedding", "vacation home", "legacy", "inheritance for", "leave to"},
	catRiskProfile: {"risk", "risks", "risky", "risk tolerance", "conservative", "aggressive", "moderate", "volatile",
		"volatility", "stock", "stocks", "equities", "bond", "bonds", "safe", "safer", "safety", "cautious",
		"careful", "gamble", "gambling", "speculative", "speculat*", "crypto*", "high growth", "play it safe",
		"guaranteed"},
	catCurrentSituation: {"salary", "income", "earn", "earns", "earning", "earnings", "paycheck", "debt", "debts",
		"mortgage", "loan", "loans", "401 k", "401k", "403 b", "403b", "ira", "iras", "roth", "savings", "pension",
		"social security", "rent", "net worth", "budget", "expenses", "paid off", "credit card*", "bonus",
		"portfolio", "invested", "balance", "brokerage", "checking account", "owe"},
	catConcern: {"worried", "worry", "worries", "worrying", "concerned", "concern", "concerns", "afraid", "scared",
		"nervous", "anxious", "anxiety", "unsure", "uncertain", "fear", "fears", "fearful", "stress", "stressed",
		"stressful", "uneasy", "panic*", "lose sleep", "losing sleep", "keeps me up", "frighten*", "terrified"},
	catPreference: {"prefer", "prefers", "preferred", "preference", "would rather", "id rather", "like to", "love to",
		"dont like", "do not like", "dislike", "hate", "quarterly", "monthly", "weekly", "annually", "by email",
		"via email", "email me", "emails", "by phone", "phone call*", "text me", "in person", "video call*",
		"plain english", "plain language", "jargon", "simple terms", "detailed", "in detail", "short answers",
		"mornings", "evenings", "weekends", "updates", "reports"},
	catProcedural: {"always", "never", "step", "steps", "step by step", "procedure*", "process", "workflow*", "routine",
		"checklist", "instruction*", "make sure", "run", "runs", "deploy*", "before", "after", "first", "then",
		"template", "the way i", "how i want"},
}

var (
	// ageRE finds an age in normalised words ("im 42", "the user 41", "42
	// years old" is a keyword).
	ageRE = regexp.MustCompile(`(?:^| )(?:im|i am|aged?|user|user is|turned|turning|turn) [1-9]\d(?: |$)`)
	// amountRE finds a money amount in the text as written.
	amountRE = regexp.MustCompile(`(?i)[$€£]\s?\d|\b\d[\d,.]*\s?(?:k|dollars|euros|pounds|grand|million)\b`)
	// monthRE finds a month name, which makes a statement specific.
	monthRE = regexp.MustCompile(`\b(?:January|February|March|April|May|June|July|August|September|October|November|December)\b`)
	// insightLineRE reads a line of an insight block, as the prompts
	// package formats it: "[label | 2026-03-07 | category | 0.90] text".
	insightLineRE = regexp.MustCompile(`^\[(.*?) \| (\d{4}-\d{2}-\d{2}) \| (.*?) \| (\d+(?:\.\d+)?)\]\s*(.*)$`)
)

// genericTerms are content words of a category's description that say
// nothing about its subject.
var genericTerms = map[string]bool{
	"advice": true, "given": true, "information": true, "info": true, "detail": true, "details": true,
	"related": true, "kind": true, "kinds": true, "belongs": true, "belong": true, "general": true,
	"etc": true, "eg": true, "ie": true, "anything": true, "everything": true, "about": true,
}

// catRule is how a sentence is matched to one offered category.
type catRule struct {
	name     string
	priority int             // lower wins a tie
	keywords []string        // default categories
	terms    map[string]bool // other categories: content stems of name and description
}

// categoryRules returns the rules of the offered categories, "name:
// description" a line. Lines that do not name a category are skipped.
func categoryRules(block string) []catRule {
	var rules []catRule
	for _, line := range strings.Split(block, "\n") {
		name, desc, _ := strings.Cut(strings.TrimSpace(line), ":")
		name = strings.TrimSpace(name)
		if name == "" || strings.ContainsAny(name, " \t") || slices.ContainsFunc(rules, func(r catRule) bool { return r.name == name }) {
			continue
		}
		rules = append(rules, ruleFor(name, desc, len(rules)))
	}
	return rules
}

func ruleFor(name, desc string, index int) catRule {
	if kw, ok := categoryKeywords[name]; ok {
		return catRule{name: name, priority: slices.Index(tiePriority, name), keywords: kw}
	}
	r := catRule{name: name, priority: len(tiePriority) + index, terms: map[string]bool{}}
	for _, tk := range tokenize(strings.ReplaceAll(name, "_", " ") + " " + desc) {
		if tk.content && !genericTerms[tk.norm] {
			r.terms[tk.stem] = true
		}
	}
	return r
}

// classify returns the category of rules that text matches best, and
// false when it matches none.
func classify(text string, rules []catRule) (string, bool) {
	words := " " + strings.Join(lexis.Words(text), " ") + " "
	var stems []string
	for _, tk := range tokenize(text) {
		if tk.content && !slices.Contains(stems, tk.stem) {
			stems = append(stems, tk.stem)
		}
	}
	best, bestScore, bestPri := "", 0, 0
	for _, r := range rules {
		score := 0
		if r.keywords != nil {
			for _, kw := range r.keywords {
				if prefix, ok := strings.CutSuffix(kw, "*"); ok {
					if strings.Contains(words, " "+prefix) {
						score++
					}
				} else if strings.Contains(words, " "+kw+" ") {
					score++
				}
			}
			switch r.name {
			case catDemographics:
				if ageRE.MatchString(strings.TrimSpace(words)) {
					score++
				}
			case catCurrentSituation:
				if amountRE.MatchString(text) {
					score++
				}
			}
		} else {
			for _, s := range stems {
				if r.terms[s] {
					score++
				}
			}
		}
		if score > bestScore || (score == bestScore && score > 0 && r.priority < bestPri) {
			best, bestScore, bestPri = r.name, score, r.priority
		}
	}
	return best, bestScore > 0
}

func importanceOf(category string) string {
	switch category {
	case catFinancialGoals, catRiskProfile, catConcern:
		return "high"
	}
	return "medium"
}

// reflectionInsight is one insight of the session_reflection answer.
type reflectionInsight struct {
	Category   string  `json:"category"`
	Text       string  `json:"insight_text"`
	Confidence float64 `json:"confidence"`
	Importance string  `json:"importance"`
}

type reflectionAnswer struct {
	Flag     string              `json:"reflection_flag"`
	Insights []reflectionInsight `json:"insights"`
}

func handleSessionReflection(ctx context.Context, req *agent.ChatRequest) (*agent.ChatResponse, error) {
	blocks, err := dataBlocks(req, prompts.BlockSessions, prompts.BlockCategories)
	if err != nil {
		return nil, err
	}
	return jsonResponse(req, reflectSessions(blocks[prompts.BlockSessions], categoryRules(blocks[prompts.BlockCategories])))
}

// secretRE matches what the prompt forbids recording: passwords, PINs,
// security answers and long numbers (account, card or id numbers: eight
// or more digits, spaces and dashes allowed between them).
var secretRE = regexp.MustCompile(`(?i)\b(?:passwords?|passcodes?|passphrases?|pins?|pin codes?|security (?:questions?|answers?)|social security numbers?|ssn|credentials?)\b|\d(?:[ -]?\d){7,}`)

// reflectSessions applies the session_reflection rules to a <sessions> block.
func reflectSessions(sessions string, rules []catRule) reflectionAnswer {
	ans := reflectionAnswer{Flag: prompts.FlagNoInsight, Insights: []reflectionInsight{}}
	seen := map[string]bool{}
	// Session headers and the "left out" note parse as messages of role
	// "unknown"; only the user's own messages count.
	for _, t := range prompts.ParseTurns(sessions) {
		if t.Role != "user" {
			continue
		}
		for _, s := range lexis.Sentences(t.Text) {
			s = cleanText(s)
			if !statesLastingFact(s) || secretRE.MatchString(s) {
				continue
			}
			cat, ok := classify(s, rules)
			if !ok {
				continue
			}
			s = truncateRunes(capWords(s, maxSentenceWords), maxQuoteRunes)
			text, ok := thirdPerson(s)
			if !ok {
				text = `The user said: "` + s + `"`
			}
			text = truncateRunes(text, prompts.MaxInsightRunes)
			key := strings.ToLower(text)
			if seen[key] {
				continue
			}
			seen[key] = true
			conf := confidencePlain
			if strings.ContainsFunc(s, unicode.IsDigit) || monthRE.MatchString(s) {
				conf = confidenceFigure
			}
			ans.Insights = append(ans.Insights, reflectionInsight{Category: cat, Text: text, Confidence: conf, Importance: importanceOf(cat)})
		}
	}
	// The most important first, then in the order said.
	slices.SortStableFunc(ans.Insights, func(a, b reflectionInsight) int {
		return importanceRank(a.Importance) - importanceRank(b.Importance)
	})
	if len(ans.Insights) > prompts.MaxInsights {
		ans.Insights = ans.Insights[:prompts.MaxInsights]
	}
	if len(ans.Insights) > 0 {
		ans.Flag = prompts.FlagInsight
	}
	return ans
}

func importanceRank(imp string) int {
	switch imp {
	case "high":
		return 0
	case "medium":
		return 1
	}
	return 2
}

// cleanText makes s valid UTF-8, drops control and format characters and
// collapses whitespace, as the prompts parsers clean a text.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return ' '
		}
		if unicode.IsControl(r) || r == '\uFEFF' {
			return -1
		}
		return r
	}, s)
	return collapse(s)
}

// wtok is a word of a sentence as written, with its lower-case form
// (curly apostrophes made straight).
type wtok struct {
	low        string
	start, end int
}

func wordsOf(s string) []wtok {
	var out []wtok
	for i := 0; ; {
		st, e := lexis.NextWord(s, i)
		if st == e {
			return out
		}
		i = e
		out = append(out, wtok{low: strings.ReplaceAll(strings.ToLower(s[st:e]), "’", "'"), start: st, end: e})
	}
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

// insightLine is one line of an <insights> or <new_insights> block.
type insightLine struct {
	label, category, text string
	date                  time.Time
	conf                  float64
	index                 int
}

// parseInsightLines reads the lines of an insight block; a line not in the
// "[label | date | category | confidence] text" form is kept as text
// without label, date or category.
func parseInsightLines(block string) []insightLine {
	var out []insightLine
	for _, l := range strings.Split(block, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		il := insightLine{text: l, index: len(out)}
		if m := insightLineRE.FindStringSubmatch(l); m != nil {
			il.label, il.category, il.text = strings.TrimSpace(m[1]), strings.TrimSpace(m[3]), m[5]
			il.date, _ = time.Parse("2006-01-02", m[2])
			il.conf, _ = strconv.ParseFloat(m[4], 64)
			if il.category == "-" {
				il.category = ""
			}
		}
		il.text = cleanText(il.text)
		if il.text != "" {
			out = append(out, il)
		}
	}
	return out
}

// contentStems returns the distinct content stems of text (stopwords and
// filler words such as "user", "said" and "want" left out).
func contentStems(text string) []string {
	var out []string
	for _, tk := range tokenize(text) {
		if tk.content && !slices.Contains(out, tk.stem) {
			out = append(out, tk.stem)
		}
	}
	return out
}

func jaccard(a, b []string) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	inter := 0
	for _, x := range a {
		if slices.Contains(b, x) {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// heavyOverlap reports whether two statements say the same thing or the
// same thing with other figures.
func heavyOverlap(a, b []string) bool {
	if jaccard(a, b) >= overlapJaccard {
		return true
	}
	words := func(ts []string) []string {
		var out []string
		for _, t := range ts {
			if !strings.ContainsFunc(t, unicode.IsDigit) {
				out = append(out, t)
			}
		}
		return out
	}
	wa, wb := words(a), words(b)
	return len(wa) < len(a) && len(wb) < len(b) && jaccard(wa, wb) >= figureJaccard
}

func handleProfileSynthesis(ctx context.Context, req *agent.ChatRequest) (*agent.ChatResponse, error) {
	blocks, err := dataBlocks(req, prompts.BlockProfile, prompts.BlockNewInsights)
	if err != nil {
		return nil, err
	}
	profile := synthesizeProfile(blocks[prompts.BlockProfile], parseInsightLines(blocks[prompts.BlockNewInsights]), prompts.ProfileWords)
	if !strings.ContainsFunc(profile, lexis.IsWordRune) {
		return nil, fmt.Errorf("no profile text: neither the <%s> nor the <%s> block has a word", prompts.BlockProfile, prompts.BlockNewInsights)
	}
	return &agent.ChatResponse{
		Message:      agent.AssistantText(profile),
		Usage:        usage(req, countWords(profile)),
		FinishReason: "stop",
		Model:        ModelName,
	}, nil
}

// piece is one sentence of a profile being composed.
type piece struct {
	text     string
	category string
	stems    []string
	old      bool // from the current profile
	line     insightLine
	dropped  bool
}

// synthesizeProfile applies the profile_synthesis rules.
func synthesizeProfile(profile string, lines []insightLine, budget int) string {
	// The newest insight first: it wins over the older ones it overlaps.
	news := make([]*piece, 0, len(lines))
	for _, l := range lines {
		news = append(news, &piece{text: sentenceEnd(l.text), category: l.category, stems: contentStems(l.text), line: l})
	}
	slices.SortStableFunc(news, func(a, b *piece) int { return newer(a.line, b.line) })
	var kept []*piece
	for _, p := range news {
		if !slices.ContainsFunc(kept, func(k *piece) bool { return sameStatement(k, p) }) {
			kept = append(kept, p)
		}
	}
	// The current profile, its sentences classified by the same rules.
	rules := []catRule{}
	for _, name := range profileOrder {
		rules = append(rules, ruleFor(name, "", 0))
	}
	for _, p := range kept {
		if p.category != "" && !slices.ContainsFunc(rules, func(r catRule) bool { return r.name == p.category }) {
			rules = append(rules, ruleFor(p.category, "", len(rules)))
		}
	}
	var olds []*piece
	for _, s := range textSentences(profile) {
		s = cleanText(s)
		cat, _ := classify(s, rules)
		olds = append(olds, &piece{text: s, category: cat, stems: contentStems(s), old: true})
	}
	var fresh []*piece
	for _, p := range kept {
		if slices.ContainsFunc(olds, func(o *piece) bool {
			return strings.EqualFold(o.text, p.text) || (len(o.stems) > 0 && jaccard(o.stems, p.stems) == 1)
		}) {
			continue // the profile says it already
		}
		for _, o := range olds {
			if o.category == "" || o.category == p.category {
				o.dropped = o.dropped || heavyOverlap(o.stems, p.stems)
			}
		}
		fresh = append(fresh, p)
	}
	olds = slices.DeleteFunc(olds, func(o *piece) bool { return o.dropped })

	// Within the budget: the current profile gives way from its end, then
	// the oldest insights.
	words := 0
	for _, p := range append(slices.Clone(olds), fresh...) {
		words += countWords(p.text)
	}
	for words > budget && len(olds)+len(fresh) > 1 {
		if len(olds) > 0 {
			words -= countWords(olds[len(olds)-1].text)
			olds = olds[:len(olds)-1]
			continue
		}
		oldest := len(fresh) - 1 // fresh is newest first
		words -= countWords(fresh[oldest].text)
		fresh = fresh[:oldest]
	}
	slices.Reverse(fresh) // oldest first within a category

	var parts []string
	for _, group := range groupOrder(olds, fresh) {
		for _, p := range append(slices.Clone(olds), fresh...) {
			if p.category == group {
				parts = append(parts, p.text)
			}
		}
	}
	return truncateRunes(capWords(strings.Join(parts, " "), budget), prompts.MaxProfileRunes)
}

// newer orders insight lines: negative when a is newer than b (later date,
// then more confident, then later in the block).
func newer(a, b insightLine) int {
	switch {
	case !a.date.Equal(b.date):
		return b.date.Compare(a.date)
	case a.conf != b.conf:
		if a.conf > b.conf {
			return -1
		}
		return 1
	}
	return b.index - a.index
}

// sameStatement reports whether insight p says what k says, or its older
// version: the same category and heavily overlapping words.
func sameStatement(k, p *piece) bool {
	if !strings.EqualFold(k.category, p.category) {
		return false
	}
	return strings.EqualFold(k.text, p.text) || heavyOverlap(k.stems, p.stems)
}

// groupOrder lists the categories of the pieces in profile order: the
// default categories, the others by name, the uncategorised last.
func groupOrder(lists ...[]*piece) []string {
	var others []string
	uncategorised := false
	for _, l := range lists {
		for _, p := range l {
			switch {
			case p.category == "":
				uncategorised = true
			case !slices.Contains(profileOrder, p.category) && !slices.Contains(others, p.category):
				others = append(others, p.category)
			}
		}
	}
	slices.Sort(others)
	out := append(slices.Clone(profileOrder), others...)
	if uncategorised {
		out = append(out, "")
	}
	return out
}

// reconcileAnswer is the reconcile answer.
type reconcileAnswer struct {
	Duplicates     []duplicateGroup `json:"duplicates"`
	Contradictions []labelGroup     `json:"contradictions"`
}

type duplicateGroup struct {
	IDs    []string `json:"ids"`
	Merged string   `json:"merged_text"`
}

type labelGroup struct {
	IDs []string `json:"ids"`
}

func handleReconcile(ctx context.Context, req *agent.ChatRequest) (*agent.ChatResponse, error) {
	blocks, err := dataBlocks(req, prompts.BlockInsights)
	if err != nil {
		return nil, err
	}
	return jsonResponse(req, reconcile(parseInsightLines(blocks[prompts.BlockInsights])))
}

// sharedTerms are the terms every insight shares; they say nothing about
// whether two insights are the same.
var sharedTerms = lexis.Terms("user users said say says")

// reconcile applies the reconcile rules.
func reconcile(lines []insightLine) reconcileAnswer {
	ans := reconcileAnswer{Duplicates: []duplicateGroup{}, Contradictions: []labelGroup{}}
	type member struct {
		line  insightLine
		terms []string
	}
	var groups [][]member
	seen := map[string]bool{}
	for _, l := range lines {
		if l.label == "" || seen[l.label] {
			continue
		}
		seen[l.label] = true
		terms := slices.DeleteFunc(lexis.Terms(l.text), func(t string) bool { return slices.Contains(sharedTerms, t) })
		if len(terms) == 0 {
			continue
		}
		m := member{l, terms}
		joined := false
		for gi, g := range groups {
			if !strings.EqualFold(g[0].line.category, l.category) {
				continue
			}
			if !slices.ContainsFunc(g, func(o member) bool { return jaccard(o.terms, terms) < reconcileJaccard }) {
				groups[gi] = append(g, m)
				joined = true
				break
			}
		}
		if !joined {
			groups = append(groups, []member{m})
		}
	}
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		var dg duplicateGroup
		best := g[0].line
		for _, m := range g {
			dg.IDs = append(dg.IDs, m.line.label)
			if n, bn := utf8.RuneCountInString(m.line.text), utf8.RuneCountInString(best.text); n > bn || (n == bn && m.line.date.After(best.date)) {
				best = m.line
			}
		}
		dg.Merged = best.text
		ans.Duplicates = append(ans.Duplicates, dg)
	}
	return ans
}
