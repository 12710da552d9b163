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
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

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
		il.text = prompts.CleanText(il.text)
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
