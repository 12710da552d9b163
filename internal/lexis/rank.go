package lexis

import "slices"

// TermSet is a set of content terms, as Terms returns them.
type TermSet map[string]struct{}

// NewTermSet returns the set of content terms of text.
func NewTermSet(text string) TermSet {
	terms := Terms(text)
	set := make(TermSet, len(terms))
	for _, t := range terms {
		set[t] = struct{}{}
	}
	return set
}

// Overlap returns how many distinct terms of q occur in text.
func (q TermSet) Overlap(text string) int {
	if len(q) == 0 {
		return 0
	}
	var (
		buf   []byte
		found []string // distinct hits; few, so a slice beats a map
	)
	for i := 0; ; {
		s, e := NextWord(text, i)
		if s == e {
			return len(found)
		}
		i = e
		buf = AppendNorm(buf[:0], text[s:e])
		if IsStopwordBytes(buf) {
			continue
		}
		buf = Stem(buf)
		if _, ok := q[string(buf)]; !ok || slices.Contains(found, string(buf)) {
			continue
		}
		found = append(found, string(buf))
		if len(found) == len(q) {
			return len(found)
		}
	}
}

// Scored is a text's index and its overlap score.
type Scored struct {
	Index int
	Score int
}

// Rank scores every text by its Overlap with query and returns up to n of
// them with a positive score, best first; equal scores keep text order.
// n <= 0 means no limit.
func Rank(query string, texts []string, n int) []Scored {
	q := NewTermSet(query)
	if len(q) == 0 {
		return nil
	}
	var out []Scored
	for i, t := range texts {
		if s := q.Overlap(t); s > 0 {
			out = append(out, Scored{Index: i, Score: s})
		}
	}
	slices.SortStableFunc(out, func(a, b Scored) int { return b.Score - a.Score })
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
}
