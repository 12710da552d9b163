package retrieval

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentmemory/agentmemory/internal/lexis"
	"github.com/agentmemory/agentmemory/store"
)

// Direct-mode ranking of interactions.
//
// The store ranks a kind by a hybrid of its vector legs and BM25 full text
// (fused by Reciprocal Rank Fusion) and reports each hit's BM25 score and
// best cosine similarity. Direct mode re-scores the store's candidates with
// these weights (measured on LoCoMo with the offline defaults; see
// tests/locomo):
//
//	score = BM25/maxBM25                      (the text leg, full weight)
//	      + rankVectorWeight  * relevance     (the vector leg, relative: see Search)
//	      + rankCoverageWeight * coverage     (share of the query's terms the document holds)
//	      + rankDateWeight    * [in the date window the query names]
//
// Rank fusion alone gives a weak leg the same say as a strong one: with the
// lexical embedder, equal-weight RRF of the vector leg and BM25 lost a
// fifth of the recall. Scores keep each leg's confidence, and relevance
// (0 at the query's background, 1 for its nearest document) keeps vector
// matches that are not close out of the sum, on any embedder's scale.
//
// rankVectorWeight is not measured with a semantic embedder (none runs
// offline). With the lexical embedder every weight tried lowered recall on
// LoCoMo (the figures are in CHANGELOG.md), so a lexical embedder has no
// vector leg (embed.IsLexical), and the weight is set at half the text
// leg's for embedders whose vectors carry meaning the words do not.
//
// Coverage counts the query's content terms (stopwords dropped, stemmed)
// found in the document's content, summary, topics and entities, each
// weighted by its rarity among the candidates (log(1 + n/(1+df))): BM25
// over OR-ed words lets a document that repeats one word outrank one that
// holds them all. Two refinements of its terms (each within the noise of
// a few questions alone, a small gain together; see CHANGELOG.md):
//   - the asking word of an interrogative phrase ("how many", "how long",
//     "what kind of", "in what ways") is no term: it names the form of the
//     answer, which the conversation does not repeat. The full-text leg
//     keeps it (dropping it there too lowered recall);
//   - lexis.Terms brings irregular inflections to their base form, so the
//     "did win" of a question meets the "won" of the conversation.
//
// A chunk continues the conversation of the one before it, and the words
// of a question often meet the chunk where its subject comes up while the
// answer is told in the next ("What is Tim excited to see at Universal
// Studios?": Universal Studios in one chunk, Harry Potter in the next).
// So the chunk that follows each of the top results in its session (the
// one store.ChunkID names for the turn after its last) joins the ranking,
// if it is no candidate already, at rankFollowWeight times the score of
// the result it follows: after it, and ahead of what scores less than
// that. On LoCoMo 0.4 gave the best recall of the weights tried (the
// figures are in CHANGELOG.md). A higher weight lets the follow-ons push
// the second chunk of two-chunk answers out of the top five; raising the
// score of a follow-on that is a candidate already lowered recall. Adding
// the previous chunk as well measured the same, so it is not read.
//
// A query that names a date or a range of dates ("on 9 November, 2022",
// "in March 2024", "in 2023", "between August 11 and August 15, 2023")
// favours interactions dated in that period or up to rankDateSlack after
// it (what happened is often told a few days later); those are also
// searched on their own, so that one ranked below the candidate depth is
// not missed.
const (
	rankVectorWeight   = 0.5
	rankCoverageWeight = 0.5
	rankDateWeight     = 0.5
	rankDateSlack      = 7 * 24 * time.Hour
	rankFollowWeight   = 0.4
)

// rankCandidate is one interaction being ranked.
type rankCandidate struct {
	doc        *store.Interaction
	text       float64 // BM25 score from the store
	similarity float64 // best cosine with the query
	relevance  float64 // similarity relative to the query's background
	inWindow   bool
	score      float64
}

// rankAskWords matches the interrogative phrases whose second word asks for
// the form of the answer ("how many", "how long", "what kind of", "in what
// ways") rather than naming what it is about: the conversation answers
// "How many turtles does Nate have?" with "my three turtles", not with
// "many".
var rankAskWords = regexp.MustCompile(`(?i)\b(how)\s+(?:many|much|long|often|far|old)\b|\b(what|which)\s+(?:kinds?|types?|sorts?|ways?)\b`)

// rankCoverageQuery returns the query without the asking word of its
// interrogative phrases (rankAskWords), for coverage.
func rankCoverageQuery(query string) string {
	return rankAskWords.ReplaceAllString(query, "$1$2")
}

// rankQueryText returns the query's words without stopwords, for the
// store's full-text leg (whose words are OR-ed, so a stopword only adds
// noise); the query itself when it has nothing else.
func rankQueryText(query string) string {
	var words []string
	var buf []byte
	for i := 0; ; {
		s, e := lexis.NextWord(query, i)
		if s == e {
			break
		}
		i = e
		buf = lexis.AppendNorm(buf[:0], query[s:e])
		if len(buf) > 0 && !lexis.IsStopwordBytes(buf) {
			words = append(words, query[s:e])
		}
	}
	if len(words) == 0 {
		return query
	}
	return strings.Join(words, " ")
}

// rankScore scores the candidates and sorts them best first (ties by
// timestamp, newest first, then id).
func rankScore(query string, cands []*rankCandidate) {
	maxText := 0.0
	for _, c := range cands {
		maxText = max(maxText, c.text)
	}
	cov := rankCoverage(query, cands)
	for i, c := range cands {
		c.score = rankVectorWeight*c.relevance + rankCoverageWeight*cov[i]
		if maxText > 0 {
			c.score += c.text / maxText
		}
		if c.inWindow {
			c.score += rankDateWeight
		}
	}
	rankSort(cands)
}

// rankSort sorts the candidates best first (ties by timestamp, newest
// first, then id).
func rankSort(cands []*rankCandidate) {
	slices.SortStableFunc(cands, func(a, b *rankCandidate) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		case !a.doc.Timestamp.Equal(b.doc.Timestamp):
			return b.doc.Timestamp.Compare(a.doc.Timestamp)
		}
		return strings.Compare(a.doc.ID, b.doc.ID)
	})
}

// rankCoverage returns, per candidate, the rarity-weighted share of the
// query's content terms it holds, in [0, 1].
func rankCoverage(query string, cands []*rankCandidate) []float64 {
	out := make([]float64, len(cands))
	terms := lexis.Terms(rankCoverageQuery(query))
	if len(terms) == 0 || len(cands) == 0 {
		return out
	}
	has := make([][]bool, len(cands))
	df := make([]int, len(terms))
	for i, c := range cands {
		d := c.doc
		set := lexis.NewTermSet(d.Content + "\n" + d.Summary + "\n" + strings.Join(d.Metadata.MentionedTopics, "\n") + "\n" + strings.Join(d.Metadata.Entities, "\n"))
		has[i] = make([]bool, len(terms))
		for j, t := range terms {
			if _, ok := set[t]; ok {
				has[i][j] = true
				df[j]++
			}
		}
	}
	n := float64(len(cands))
	w := make([]float64, len(terms))
	total := 0.0
	for j := range terms {
		w[j] = math.Log(1 + n/float64(1+df[j]))
		total += w[j]
	}
	for i := range cands {
		got := 0.0
		for j := range terms {
			if has[i][j] {
				got += w[j]
			}
		}
		out[i] = got / total
	}
	return out
}

var rankMonths = map[string]time.Month{
	"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7, "august": 8,
	"september": 9, "october": 10, "november": 11, "december": 12,
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12,
}

const rankMonthRE = `(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?`

var (
	rankDayMonthYear = regexp.MustCompile(`(?i)\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?` + rankMonthRE + `,?\s+(\d{4})\b`)
	rankMonthDayYear = regexp.MustCompile(`(?i)\b` + rankMonthRE + `\s+(\d{1,2})(?:st|nd|rd|th)?,?\s*(\d{4})\b`)
	rankISODate      = regexp.MustCompile(`\b(\d{4})-(\d{2})-(\d{2})\b`)
	rankMonthYear    = regexp.MustCompile(`(?i)\b` + rankMonthRE + `,?\s+(\d{4})\b`)
	rankYear         = regexp.MustCompile(`\b((?:19|20)\d\d)\b`)
)

// rankDateWindow returns the period [since, until) the query names — a
// range ("between August 11 and August 15, 2023", "from March to May
// 2024", the first date taking the second's year when it has none), or
// else the first explicit date: a day, a month of a year or a year, in
// that order of precision — widened by a day before and rankDateSlack
// after. Relative dates ("last week") and months without a year are left
// alone: they need the asker's own date, which a stored memory does not
// share.
func rankDateWindow(query string) (since, until time.Time, ok bool) {
	from, to, _, ok := rankPeriod(query)
	if m := rankRange.FindStringSubmatch(query); m != nil {
		if f2, t2, _, ok2 := rankPeriod(m[2]); ok2 {
			f1, _, _, ok1 := rankPeriod(m[1])
			if !ok1 {
				// "August 11" of "between August 11 and August 15, 2023":
				// a day or month, not the year just lent.
				var p rankPrecision
				f1, _, p, ok1 = rankPeriod(m[1] + " " + strconv.Itoa(f2.Year()))
				ok1 = ok1 && p > rankYearOnly
			}
			if ok1 && f1.Before(t2) {
				from, to, ok = f1, t2, true
			}
		}
	}
	if !ok {
		return time.Time{}, time.Time{}, false
	}
	return from.Add(-24 * time.Hour), to.Add(rankDateSlack), true
}

// rankRange finds the two ends of a date range.
var rankRange = regexp.MustCompile(`(?i)\b(?:between|from)\s+(.{3,40}?)\s+(?:and|to|until|till|through)\s+(.{3,40})`)

// rankPrecision is what a date names: a year, a month or a day.
type rankPrecision int

const (
	rankYearOnly rankPrecision = iota + 1
	rankMonthOnly
	rankDay
)

// rankPeriod returns the period [from, to) of the first explicit date of
// text, and its precision: a day, a month of a year or a year, tried in
// that order.
func rankPeriod(text string) (from, to time.Time, p rankPrecision, ok bool) {
	day := func(y, m, d string, month time.Month) (time.Time, bool) {
		yy, _ := strconv.Atoi(y)
		dd, _ := strconv.Atoi(d)
		if month == 0 {
			mm, _ := strconv.Atoi(m)
			month = time.Month(mm)
		}
		if month < 1 || month > 12 || dd < 1 || dd > 31 {
			return time.Time{}, false
		}
		return time.Date(yy, month, dd, 0, 0, 0, 0, time.UTC), true
	}
	if m := rankDayMonthYear.FindStringSubmatch(text); m != nil {
		if t, ok := day(m[3], "", m[1], rankMonths[strings.ToLower(m[2])]); ok {
			return t, t.AddDate(0, 0, 1), rankDay, true
		}
	}
	if m := rankMonthDayYear.FindStringSubmatch(text); m != nil {
		if t, ok := day(m[3], "", m[2], rankMonths[strings.ToLower(m[1])]); ok {
			return t, t.AddDate(0, 0, 1), rankDay, true
		}
	}
	if m := rankISODate.FindStringSubmatch(text); m != nil {
		if t, ok := day(m[1], m[2], m[3], 0); ok {
			return t, t.AddDate(0, 0, 1), rankDay, true
		}
	}
	if m := rankMonthYear.FindStringSubmatch(text); m != nil {
		y, _ := strconv.Atoi(m[2])
		t := time.Date(y, rankMonths[strings.ToLower(m[1])], 1, 0, 0, 0, 0, time.UTC)
		return t, t.AddDate(0, 1, 0), rankMonthOnly, true
	}
	if m := rankYear.FindStringSubmatch(text); m != nil {
		y, _ := strconv.Atoi(m[1])
		t := time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
		return t, t.AddDate(1, 0, 0), rankYearOnly, true
	}
	return time.Time{}, time.Time{}, 0, false
}
