package lexis

// Stem strips common English inflections from a normalised word, in place,
// and returns the shortened slice. It is a deliberately light and
// conservative suffix stripper, not the Porter algorithm:
//
//   - plurals: "-sses" → "-ss", "-ies" → "-y", "-s" → "" (not after s, u or i);
//   - "-ied" → "-y"; "-ing" and "-ed" → "" when a vowel remains, then a
//     doubled final consonant is undoubled ("planning" → "plan");
//   - a final "-e" → "" ("retire", "retired", "retiring" all → "retir").
//
// Each rule only fires when at least three bytes remain, so short words are
// left alone. Words with a non-ASCII byte are returned unchanged: the rules
// are English ones.
func Stem(w []byte) []byte {
	n := len(w)
	if n <= 3 {
		return w
	}
	for _, c := range w {
		if c >= 0x80 {
			return w
		}
	}
	switch {
	case hasSuffix(w, "sses"):
		w = w[:n-2]
	case hasSuffix(w, "ies") && n > 4:
		w = append(w[:n-3], 'y')
	case hasSuffix(w, "ied") && n > 4:
		w = append(w[:n-3], 'y')
		return w
	case w[n-1] == 's' && !hasSuffix(w, "ss") && !hasSuffix(w, "us") && !hasSuffix(w, "is"):
		w = w[:n-1]
	}
	switch {
	case hasSuffix(w, "ing") && len(w)-3 >= 3 && hasVowel(w[:len(w)-3]):
		w = undouble(w[:len(w)-3])
	case hasSuffix(w, "ed") && len(w)-2 >= 3 && hasVowel(w[:len(w)-2]):
		w = undouble(w[:len(w)-2])
	}
	if len(w) > 3 && w[len(w)-1] == 'e' {
		w = w[:len(w)-1]
	}
	return w
}

func hasSuffix(w []byte, suf string) bool {
	return len(w) >= len(suf) && string(w[len(w)-len(suf):]) == suf
}

func isVowel(c byte) bool {
	switch c {
	case 'a', 'e', 'i', 'o', 'u', 'y':
		return true
	}
	return false
}

func hasVowel(w []byte) bool {
	for _, c := range w {
		if isVowel(c) {
			return true
		}
	}
	return false
}

// undouble drops one of a doubled final consonant other than l, s or z, when
// three bytes or more remain.
func undouble(w []byte) []byte {
	n := len(w)
	if n < 4 {
		return w
	}
	c := w[n-1]
	if c == w[n-2] && 'a' <= c && c <= 'z' && !isVowel(c) && c != 'l' && c != 's' && c != 'z' {
		return w[:n-1]
	}
	return w
}
