package lexis

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sentences splits text into sentences, in order.
//
// A line break always ends a sentence, so bullet lists and headings come
// out one item per sentence. Within a line, a run of '.', '!', '?' or '…'
// (with any closing quotes or brackets after it) ends a sentence when
// whitespace or the end of the line follows, except a '.' right after a
// one-letter word ("J. Smith", "e.g. this") or a common abbreviation
// ("Mr.", "Dr.", "vs.", "etc."). The CJK full stops '。', '！' and '？' always
// end a sentence.
//
// Each sentence is trimmed of surrounding whitespace and of leading list or
// quote markers ("- ", "* ", "• ", "> ", "## "). Sentences without a single
// word are dropped. The results are substrings of text.
func Sentences(text string) []string {
	var out []string
	for len(text) > 0 {
		line := text
		if i := strings.IndexAny(text, "\r\n"); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		out = splitLine(line, out)
	}
	return out
}

func splitLine(line string, out []string) []string {
	start := 0
	for i := 0; i < len(line); {
		r, n := decode(line, i)
		i += n
		if !isTerminator(r) {
			continue
		}
		cjk := r == '。' || r == '！' || r == '？'
		dot := r == '.'
		// Absorb the rest of the terminator run and any closers.
		for i < len(line) {
			r2, n2 := decode(line, i)
			if isTerminator(r2) {
				dot = dot && r2 == '.'
				cjk = cjk || r2 == '。' || r2 == '！' || r2 == '？'
				i += n2
				continue
			}
			if isCloser(r2) {
				i += n2
				continue
			}
			break
		}
		if !cjk && i < len(line) {
			r2, _ := decode(line, i)
			if !unicode.IsSpace(r2) {
				continue
			}
		}
		if dot && !cjk && abbreviationBefore(line[start:i]) {
			continue
		}
		out = appendSentence(out, line[start:i])
		start = i
	}
	return appendSentence(out, line[start:])
}

func isTerminator(r rune) bool {
	switch r {
	case '.', '!', '?', '…', '。', '！', '？':
		return true
	}
	return false
}

func isCloser(r rune) bool {
	switch r {
	case '"', '\'', ')', ']', '}', '”', '’', '»', '」', '』', '）':
		return true
	}
	return false
}

// abbreviationBefore reports whether s, which ends in a period (and maybe
// closers), ends in a one-letter word or a common abbreviation.
func abbreviationBefore(s string) bool {
	s = strings.TrimRightFunc(s, func(r rune) bool { return isTerminator(r) || isCloser(r) })
	j := len(s)
	for j > 0 {
		r, n := utf8.DecodeLastRuneInString(s[:j])
		if !unicode.IsLetter(r) {
			break
		}
		j -= n
	}
	w := s[j:]
	if w == "" {
		return false
	}
	if r, _ := utf8.DecodeLastRuneInString(s[:j]); j > 0 && unicode.IsDigit(r) {
		return false // the end of "401k", not a one-letter word
	}
	if utf8.RuneCountInString(w) == 1 {
		return true
	}
	switch strings.ToLower(w) {
	case "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "inc", "ltd", "approx":
		return true
	}
	return false
}

func appendSentence(out []string, s string) []string {
	s = trimMarkers(s)
	if s == "" {
		return out
	}
	if st, e := NextWord(s, 0); st == e {
		return out
	}
	return append(out, s)
}

// trimMarkers trims whitespace and leading list, quote and heading markers.
func trimMarkers(s string) string {
	for {
		s = strings.TrimSpace(s)
		t := s
		for _, m := range [...]string{"- ", "* ", "• ", "> ", "+ "} {
			t = strings.TrimPrefix(t, m)
		}
		if h := strings.TrimLeft(t, "#"); len(h) < len(t) && (h == "" || h[0] == ' ') {
			t = h
		}
		if t == s {
			return s
		}
		s = t
	}
}
