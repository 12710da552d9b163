package offline

import (
	"math"
	"slices"
	"strings"

	"github.com/agentmemory/agentmemory/internal/lexis"
	"github.com/agentmemory/agentmemory/prompts"
)

// fold composes a running summary: prev followed by the most informative
// new sentences, within budget words. maxNewSentences of them come before
// the previous summary; more only in the room it leaves.
func fold(prev string, turns []prompts.Turn, budget int) string {
	prevSents := textSentences(prev)
	newSents := turnSentences(turns)
	doc := analyse(append(slices.Clone(prevSents), newSents...))
	nPrev := len(prevSents)

	covered := make(map[string]bool)
	for _, s := range doc.sents[:nPrev] {
		for _, t := range s.terms {
			covered[t] = true
		}
	}
	// New sentences first: up to maxNewSentences, within 3/5 of the
	// budget; then as much of the previous summary as fits, its most
	// informative sentences first; then, in the room still left (within
	// the same 3/5), the next new ones. A fold of a few short facts thus
	// keeps them all, and a long one does not crowd out the summary so far.
	var chosenNew, chosenPrev []int
	used, newWords := 0, 0
	pickNew := func(limit int) {
		for _, i := range doc.byScore(nPrev, len(doc.sents)) {
			s := doc.sents[i]
			if len(chosenNew) == limit || slices.Contains(chosenNew, i) || s.score <= 0 || redundant(s.terms, covered) || isQuestion(s.text) {
				continue
			}
			w := min(s.words, maxSentenceWords)
			if used > 0 && (newWords+w > budget*3/5 || used+w > budget) {
				continue
			}
			chosenNew = append(chosenNew, i)
			used += w
			newWords += w
			for _, t := range s.terms {
				covered[t] = true
			}
		}
	}
	pickNew(maxNewSentences)
	for _, i := range doc.byScore(0, nPrev) {
		w := min(doc.sents[i].words, maxSentenceWords)
		if used+w > budget {
			continue
		}
		chosenPrev = append(chosenPrev, i)
		used += w
	}
	pickNew(-1)
	chosen := append(chosenPrev, chosenNew...)
	slices.Sort(chosen)
	if len(chosen) == 0 && len(doc.sents) > 0 {
		chosen = []int{nPrev % len(doc.sents)} // nothing informative: keep the first new sentence
	}
	parts := make([]string, len(chosen))
	for k, i := range chosen {
		parts[k] = capWords(doc.sents[i].text, maxSentenceWords)
	}
	out := capWords(joinSentences(parts), budget)
	if out == "" { // no sentence has a word: keep what there is
		var texts []string
		for _, t := range turns {
			texts = append(texts, t.Text)
		}
		out = capWords(collapse(prev+" "+strings.Join(texts, " ")), budget)
	}
	return out
}

// isQuestion reports whether a sentence asks rather than states: a summary
// keeps what was said, and a question quoted alone reads as if the
// summary were asking it.
func isQuestion(s string) bool {
	return strings.HasSuffix(strings.TrimRight(s, "\"'”’)] "), "?")
}

// redundant reports whether at least 80% of terms are already covered.
func redundant(terms []string, covered map[string]bool) bool {
	if len(terms) == 0 {
		return true
	}
	n := 0
	for _, t := range terms {
		if covered[t] {
			n++
		}
	}
	return n*5 >= len(terms)*4
}

// sentence is one sentence of the analysed text.
type sentence struct {
	text  string
	toks  []token
	terms []string // distinct content stems
	words int
	score float64
	ents  []entity
}

// token is one word of a sentence.
type token struct {
	surface    string // as written
	norm       string // lexis-normalised
	stem       string // stemmed norm
	start, end int    // byte span in the sentence
	content    bool   // not a stopword or filler
}

// doc is an analysed list of sentences.
type doc struct {
	sents []sentence
	freq  map[string]int // content stem → occurrences
}

func textSentences(text string) []string {
	var out []string
	for _, s := range lexis.Sentences(text) {
		out = append(out, collapse(s))
	}
	return out
}

// turnSentences returns the sentences of the turns, leaving out this
// client's own composed answers (see ownAnswer).
func turnSentences(turns []prompts.Turn) []string {
	var out []string
	for _, t := range turns {
		if t.Role == "assistant" && ownAnswer(t.Text) {
			continue
		}
		out = append(out, textSentences(t.Text)...)
	}
	return out
}

// analyse tokenises and scores sentences.
func analyse(texts []string) *doc {
	d := &doc{freq: make(map[string]int)}
	for _, text := range texts {
		s := sentence{text: text, toks: tokenize(text), words: countWords(text)}
		for _, tk := range s.toks {
			if tk.content {
				d.freq[tk.stem]++
				if !slices.Contains(s.terms, tk.stem) {
					s.terms = append(s.terms, tk.stem)
				}
			}
		}
		s.ents = findEntities(text, s.toks)
		d.sents = append(d.sents, s)
	}
	for i := range d.sents {
		s := &d.sents[i]
		if len(s.terms) == 0 {
			continue
		}
		sum := 0
		for _, t := range s.terms {
			sum += d.freq[t]
		}
		s.score = float64(sum)/math.Sqrt(float64(len(s.terms))) + float64(len(s.ents))
	}
	return d
}

// byScore returns the indexes lo..hi-1 by decreasing score, ties in order.
func (d *doc) byScore(lo, hi int) []int {
	idx := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		idx = append(idx, i)
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch sa, sb := d.sents[a].score, d.sents[b].score; {
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return 0
	})
	return idx
}

// summarySentences returns the n most informative sentences, in order.
func (d *doc) summarySentences(n int) []string {
	var idx []int
	for _, i := range d.byScore(0, len(d.sents)) {
		if len(idx) == n || d.sents[i].score <= 0 {
			break
		}
		idx = append(idx, i)
	}
	if len(idx) == 0 && len(d.sents) > 0 {
		idx = []int{0}
	}
	slices.Sort(idx)
	out := make([]string, len(idx))
	for k, i := range idx {
		out[k] = capWords(d.sents[i].text, maxSentenceWords)
	}
	return out
}
