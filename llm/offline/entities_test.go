package offline

import (
	"strings"
	"testing"
)

// clueSentences holds, for every entity pattern, sentences it matches,
// written in several cases, with the Unicode letters that case folding
// gives too (the Kelvin sign for k, the long s for s).
var clueSentences = []string{
	"I have a Roth 401(k) and a roth 401K through work.",
	"My 403(b) and 457b plans, and my ROTH IRAs, SEP-IRA, Traditional IRA and rollover iras.",
	"We hold IRAs, an HSA, two 529 Plans and some ETFs.",
	"Index Funds, mutual funds, a TARGET-DATE fund and an Emergency Fund.",
	"My brokerage account, SAVINGS ACCOUNTS, checking account and Retirement Accounts.",
	"Annuities and an annuity, Social Security, the s&p500 and a MORTGAGE.",
	"I earn $85,000 a year, 12% of it saved, EUR 400k, 3 million dollars.",
	"I am 42 years old, at age 67 for 10-years, holding 300 shares.",
	"On March 3rd, 2024, and Sept. 12 in 1999.",
	// Case folding: K (U+212A) folds to k, ſ (U+017F) to s.
	"A roth 401(\u212a) and ſocial ſecurity, a brokerage accounſ, 5 \u212a.",
	"\u212aeep 3 dayſ, ſavingſ accountſ, mortgageſ and an annuitieſ.",
}

// TestCluesSkipOnlySentencesWithoutMatches checks every entity pattern's
// clue against the pattern: a sentence the pattern matches holds the clue,
// so that skipping the pattern where the clue is missing loses nothing.
// Every pattern matches at least one of the sentences.
func TestCluesSkipOnlySentencesWithoutMatches(t *testing.T) {
	patterns := append(append([]entityPattern(nil), productPatterns...), valuePatterns...)
	for _, p := range patterns {
		if p.fold && p.clue != anyDigit && (p.clue != strings.ToLower(p.clue) || strings.ContainsAny(p.clue, "ks")) {
			t.Errorf("pattern %s: clue %q is not lower-case without k or s", p.re, p.clue)
		}
		matched := false
		for _, s := range clueSentences {
			if !p.re.MatchString(s) {
				continue
			}
			matched = true
			if !p.mayMatch(s, strings.ToLower(s)) {
				t.Errorf("pattern %s matches %q, which its clue %q skips", p.re, s, p.clue)
			}
		}
		if !matched {
			t.Errorf("pattern %s matches none of the sentences", p.re)
		}
	}
}

// TestEntitiesFoundWithCluesAsWithout checks that findEntities finds what
// running every pattern on every sentence finds.
func TestEntitiesFoundWithCluesAsWithout(t *testing.T) {
	for _, s := range append(clueSentences, "Nothing to see here.", "Only 7 of them.") {
		got := findEntities(s, tokenize(s))
		want := entitiesWithoutClues(s)
		if len(got) != len(want) {
			t.Fatalf("%q: %d entities with clues, %d without: %v, %v", s, len(got), len(want), got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%q: entity %d is %+v with clues, %+v without", s, i, got[i], want[i])
			}
		}
	}
}

// entitiesWithoutClues is findEntities with every clue taken away.
func entitiesWithoutClues(s string) []entity {
	strip := func(ps []entityPattern) []entityPattern {
		out := make([]entityPattern, len(ps))
		for i, p := range ps {
			p.clue, p.fold = "", false
			out[i] = p
		}
		return out
	}
	return entitiesOf(s, tokenize(s), strip(productPatterns), strip(valuePatterns))
}

func FuzzEntityClues(f *testing.F) {
	for _, s := range clueSentences {
		f.Add(s)
	}
	patterns := append(append([]entityPattern(nil), productPatterns...), valuePatterns...)
	f.Fuzz(func(t *testing.T, s string) {
		lower := strings.ToLower(s)
		for _, p := range patterns {
			if p.re.MatchString(s) && !p.mayMatch(s, lower) {
				t.Fatalf("pattern %s matches %q, which its clue %q skips", p.re, s, p.clue)
			}
		}
	})
}

// BenchmarkFindEntities measures finding the entities of a sentence of
// chat: most hold none of the patterns' clues.
func BenchmarkFindEntities(b *testing.B) {
	sentences := []string{
		"I moved to city number 42 and I like it.",
		"We talked about the weather and my sister's wedding in Lisbon.",
		"My Roth IRA holds index funds worth $30,000.",
		"Thanks, that makes sense, talk soon!",
	}
	toks := make([][]token, len(sentences))
	for i, s := range sentences {
		toks[i] = tokenize(s)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		findEntities(sentences[i%len(sentences)], toks[i%len(sentences)])
	}
}
