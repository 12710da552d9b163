package offline

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentmemory/agentmemory/internal/lexis"
	"github.com/agentmemory/agentmemory/prompts"
)

// topic is a candidate topic: a content stem or a pair of adjacent ones.
type topic struct {
	key     string // stem, "stem\x01stem" or "\x00product"
	count   int
	first   int
	forms   map[string]int
	formSeq []string // forms in order of first use
}

// topics returns up to n topics: the most frequent content stems (ties by
// first appearance), each shown in its most frequent written form. A pair
// of adjacent content words seen at least twice, as often as one of its
// words, replaces that word ("Roth IRA" for "Roth").
func (d *doc) topics(n int) []string {
	cands := map[string]*topic{}
	var order []string
	add := func(key, form string, pos int) {
		c := cands[key]
		if c == nil {
			c = &topic{key: key, first: pos, forms: map[string]int{}}
			cands[key] = c
			order = append(order, key)
		}
		c.count++
		if c.forms[form] == 0 {
			c.formSeq = append(c.formSeq, form)
		}
		c.forms[form]++
	}
	pos := 0
	for _, s := range d.sents {
		inProduct := func(tk token) bool {
			for _, e := range s.ents {
				if e.product && tk.start < e.end && e.start < tk.end {
					return true
				}
			}
			return false
		}
		for _, e := range s.ents {
			if e.product {
				add("\x00"+strings.ToLower(e.text), e.text, pos)
			}
		}
		for j, tk := range s.toks {
			pos++
			if !tk.content || !topicWord(tk.norm) || inProduct(tk) {
				continue
			}
			add(tk.stem, topicForm(tk, j == 0), pos)
			if j+1 < len(s.toks) {
				nx := s.toks[j+1]
				if nx.content && topicWord(nx.norm) && nx.stem != tk.stem && !inProduct(nx) && onlySpaceBetween(s.text, tk, nx) {
					add(tk.stem+"\x01"+nx.stem, topicForm(tk, j == 0)+" "+topicForm(nx, false), pos)
				}
			}
		}
	}
	absorbed := map[string]bool{}
	var list []*topic
	for _, key := range order {
		c := cands[key]
		a, b, phrase := strings.Cut(key, "\x01")
		if !phrase {
			continue
		}
		if c.count < 2 || (cands[a].count != c.count && cands[b].count != c.count) {
			continue
		}
		list = append(list, c)
		for _, w := range []string{a, b} {
			if cands[w].count == c.count {
				absorbed[w] = true
			}
		}
	}
	for _, key := range order {
		if !strings.Contains(key, "\x01") && !absorbed[key] {
			list = append(list, cands[key])
		}
	}
	slices.SortStableFunc(list, func(a, b *topic) int {
		if a.count != b.count {
			return b.count - a.count
		}
		return a.first - b.first
	})
	out := []string{}
	seen := map[string]bool{}
	for _, c := range list {
		if len(out) == n {
			break
		}
		best := c.formSeq[0]
		for _, f := range c.formSeq {
			if c.forms[f] > c.forms[best] {
				best = f
			}
		}
		if k := strings.ToLower(best); !seen[k] && utf8.RuneCountInString(best) <= prompts.MaxItemRunes {
			seen[k] = true
			out = append(out, best)
		}
	}
	return out
}

// topicWord reports whether a normalised content word can be a topic: not
// a bare number and at least three characters.
func topicWord(norm string) bool {
	if utf8.RuneCountInString(norm) < 3 {
		return false
	}
	return strings.IndexFunc(norm, unicode.IsLetter) >= 0
}

// topicForm is how a topic word is shown: as written, except that a word
// capitalised only because it starts a sentence is lower-cased.
// A possessive "'s" is dropped.
func topicForm(tk token, sentenceStart bool) string {
	w := tk.surface
	for _, suf := range []string{"'s", "’s", "'S", "’S"} {
		w = strings.TrimSuffix(w, suf)
	}
	if isAllCaps(w) || (isTitle(w) && !sentenceStart) {
		return w
	}
	return strings.ToLower(w)
}

func onlySpaceBetween(text string, a, b token) bool {
	return strings.TrimSpace(text[a.end:b.start]) == ""
}

// entities returns up to n entities, by first appearance, deduplicated
// case-insensitively.
func (d *doc) entities(n int) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, s := range d.sents {
		for _, e := range s.ents {
			k := strings.ToLower(e.text)
			if seen[k] || utf8.RuneCountInString(e.text) > prompts.MaxItemRunes {
				continue
			}
			seen[k] = true
			out = append(out, e.text)
			if len(out) == n {
				return out
			}
		}
	}
	return out
}

// tokenize splits a sentence into tokens.
func tokenize(text string) []token {
	var out []token
	var buf []byte
	for st, e := range lexis.WordSpans(text) {
		buf = lexis.AppendNorm(buf[:0], text[st:e])
		if len(buf) == 0 {
			continue
		}
		norm := string(buf)
		stop := lexis.IsStopwordBytes(buf)
		stem := string(lexis.Stem(buf))
		out = append(out, token{
			surface: text[st:e], norm: norm, stem: stem, start: st, end: e,
			content: !stop && !isFiller(norm),
		})
	}
	return out
}

// isFiller reports conversational words that carry no topic.
func isFiller(w string) bool {
	if isSocial(w) {
		return true
	}
	switch w {
	case "want", "wants", "wanted", "think", "thinks", "know", "like", "likes", "get", "got", "make", "makes",
		"need", "needs", "let", "lets", "tell", "say", "said", "go", "going", "take", "sounds", "sound",
		"really", "maybe", "probably", "still", "already", "now", "well", "right", "much", "many", "lot",
		"lots", "thing", "things", "something", "anything", "way", "one", "also", "old", "new", "sense",
		"yes", "no", "can", "could", "would", "should", "will", "shall", "might", "must", "us",
		"sir", "madam", "fine", "perfect", "awesome", "welcome", "glad", "happy", "help",
		"user", "users", "assistant", "ask", "asks", "asked", "discuss", "discussed", "mention", "mentioned",
		"explain", "explained", "agree", "agreed", "agrees", "suggest", "suggested",
		"last", "next", "two", "three", "four", "five", "ten", "hundred":
		return true
	}
	return isInterjection(w)
}

// isInterjection reports exclamations and stock reactions that carry no
// topic and start no name ("Wow", "Oh", "Congrats").
func isInterjection(w string) bool {
	switch w {
	case "wow", "oh", "ooh", "ah", "aw", "aww", "awww", "whoa", "yay", "omg", "haha", "hahaha", "lol", "hmm", "um", "uh",
		"congrats", "congratulations", "sorry", "please", "dear", "hiya", "heya", "yo", "nice", "amazing", "awesome":
		return true
	}
	return false
}

func isTitle(s string) bool {
	r, n := utf8.DecodeRuneInString(s)
	if !unicode.IsUpper(r) {
		return false
	}
	for _, r := range s[n:] {
		if unicode.IsUpper(r) {
			return false
		}
	}
	return true
}

func isAllCaps(s string) bool {
	letters := 0
	for _, r := range s {
		if unicode.IsLower(r) {
			return false
		}
		if unicode.IsUpper(r) {
			letters++
		}
	}
	return letters >= 2
}

// capWords cuts s to n words, marking a cut with "…".
func capWords(s string, n int) string {
	if cut, ok := cutWords(s, n); ok {
		return cut
	}
	return s
}

func joinSentences(parts []string) string { return strings.Join(parts, " ") }
