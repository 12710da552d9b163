// Package lexis holds the small pieces of text handling that the offline
// parts of agentmemory share: word tokenisation, normalisation, a light
// English stemmer with a table of irregular inflections, an English
// stopword list, sentence splitting and word-overlap ranking.
//
// # Words
//
// Everything here is lexical and deterministic: there is no language model,
// no dictionary beyond the stopword list and the irregular forms, and no
// locale. Words are maximal runs of Unicode letters, digits and combining
// marks; an apostrophe between two letters ("don't", "user’s") joins them
// and is dropped when the word is normalised. Normalisation lower-cases
// with unicode.ToLower (no NFKC folding). Scripts written without spaces (Chinese, Japanese, Thai) come
// out as one long word per run, which callers compensate for with character
// n-grams.
//
// # Allocation
//
// The low-level functions (NextWord, AppendNorm, Stem, IsStopwordBytes)
// work on caller-owned buffers and do not allocate, so a hot loop such as
// embed/lexical can use them per token.
package lexis

import (
	"iter"
	"unicode"
	"unicode/utf8"
)

// IsWordRune reports whether r belongs to a word: a Unicode letter, decimal
// digit or combining mark.
func IsWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		l := r | 0x20 // ASCII lower case for letters
		return ('a' <= l && l <= 'z') || ('0' <= r && r <= '9')
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc)
}

func isApostrophe(r rune) bool { return r == '\'' || r == '’' }

// decode returns the rune at s[i] and its width; invalid UTF-8 decodes as
// utf8.RuneError of width 1, which is not a word rune.
func decode(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// NextWord returns the byte span [start, end) of the first word of s that
// begins at or after byte offset i. When there is none it returns
// (len(s), len(s)). An apostrophe followed by a letter does not end a word.
func NextWord(s string, i int) (start, end int) {
	if i < 0 {
		i = 0
	}
	for i < len(s) {
		r, n := decode(s, i)
		if IsWordRune(r) {
			break
		}
		i += n
	}
	start = i
	for i < len(s) {
		r, n := decode(s, i)
		if IsWordRune(r) {
			i += n
			continue
		}
		if isApostrophe(r) && i+n < len(s) {
			if r2, _ := decode(s, i+n); unicode.IsLetter(r2) {
				i += n
				continue
			}
		}
		break
	}
	return start, i
}

// AppendNorm appends the normalised form of word (as found by NextWord) to
// dst: lower case, apostrophes dropped. Invalid UTF-8 is dropped too.
func AppendNorm(dst []byte, word string) []byte {
	for i := 0; i < len(word); {
		c := word[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case 'A' <= c && c <= 'Z':
				dst = append(dst, c+('a'-'A'))
			case c == '\'':
			default:
				dst = append(dst, c)
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(word[i:])
		i += n
		if r == utf8.RuneError || isApostrophe(r) {
			continue
		}
		dst = utf8.AppendRune(dst, unicode.ToLower(r))
	}
	return dst
}

// WordSpans yields the byte span [start, end) of each word of s in turn,
// as NextWord finds them.
func WordSpans(s string) iter.Seq2[int, int] {
	return func(yield func(start, end int) bool) {
		for i := 0; ; {
			start, end := NextWord(s, i)
			if start == end || !yield(start, end) {
				return
			}
			i = end
		}
	}
}

// Words returns the normalised (lower-cased, unstemmed) words of text.
func Words(text string) []string {
	var out []string
	for w := range normWords(text) {
		out = append(out, string(w))
	}
	return out
}

// normWords yields the words of text that normalise to something, as
// AppendNorm makes them, in one buffer that the next word overwrites.
func normWords(text string) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		var buf []byte
		for s, e := range WordSpans(text) {
			buf = AppendNorm(buf[:0], text[s:e])
			if len(buf) > 0 && !yield(buf) {
				return
			}
		}
	}
}

// CountWords returns the number of words in text, as NextWord finds them.
func CountWords(text string) int {
	n := 0
	for range WordSpans(text) {
		n++
	}
	return n
}

// Terms returns the distinct content terms of text, in order of first
// appearance: normalised, stopwords removed, irregular inflections brought
// to their base form (BaseForm: "won" → "win") and stemmed with Stem.
func Terms(text string) []string {
	var out []string
	seen := make(map[string]struct{})
	for buf := range normWords(text) {
		if IsStopwordBytes(buf) {
			continue
		}
		if b, ok := BaseForm(string(buf)); ok {
			buf = append(buf[:0], b...)
		}
		buf = Stem(buf)
		if _, dup := seen[string(buf)]; dup {
			continue
		}
		t := string(buf)
		seen[t] = struct{}{}
		out = append(out, t)
	}
	return out
}
