package lexis

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWordSpans(t *testing.T) {
	const s = "Hi, user’s 401k!"
	var got []string
	for st, e := range WordSpans(s) {
		got = append(got, s[st:e])
	}
	if want := []string{"Hi", "user’s", "401k"}; !slices.Equal(got, want) {
		t.Errorf("spans %q, want %q", got, want)
	}
	for range WordSpans(s) {
		break // stopping early must not panic
	}
	if n := CountWords(s); n != 3 {
		t.Errorf("CountWords = %d", n)
	}
}

func TestWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  ...  ", nil},
		{"Hello, World!", []string{"hello", "world"}},
		{"I don't know the user’s 401k plan", []string{"i", "dont", "know", "the", "users", "401k", "plan"}},
		{"rock 'n' roll", []string{"rock", "n", "roll"}},
		{"snake_case-and-kebab", []string{"snake", "case", "and", "kebab"}},
		{"ÉCOLE Straße naïve", []string{"école", "straße", "naïve"}},
		{"Привет, мир", []string{"привет", "мир"}},
		{"東京に住んでいます。", []string{"東京に住んでいます"}},
		{"bad\xffbyte", []string{"bad", "byte"}},
		{"trailing'", []string{"trailing"}},
	}
	for _, tt := range tests {
		if got := Words(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Words(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := CountWords(tt.in); got != len(tt.want) {
			t.Errorf("CountWords(%q) = %d, want %d", tt.in, got, len(tt.want))
		}
	}
}

func TestStem(t *testing.T) {
	tests := map[string]string{
		"cars":       "car",
		"classes":    "class",
		"studies":    "study",
		"studied":    "study",
		"bus":        "bus",
		"this":       "this",
		"planning":   "plan",
		"planned":    "plan",
		"plans":      "plan",
		"retire":     "retir",
		"retired":    "retir",
		"retiring":   "retir",
		"retirement": "retirement",
		"need":       "need",
		"called":     "call",
		"add":        "add",
		"sing":       "sing",
		"running":    "run",
		"investing":  "invest",
		"école":      "école",
		"ab":         "ab",
	}
	for in, want := range tests {
		if got := string(Stem([]byte(in))); got != want {
			t.Errorf("Stem(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStopwords(t *testing.T) {
	for _, w := range []string{"the", "and", "dont", "youre", "what"} {
		if !IsStopword(w) || !IsStopwordBytes([]byte(w)) {
			t.Errorf("%q should be a stopword", w)
		}
	}
	for _, w := range []string{"retirement", "car", "401k", "id", "well", "", "theirselvesxx"} {
		if IsStopword(w) || IsStopwordBytes([]byte(w)) {
			t.Errorf("%q should not be a stopword", w)
		}
	}
}

func TestTerms(t *testing.T) {
	got := Terms("What are my retirement plans? I planned to retire; the plan is retirement.")
	want := []string{"retirement", "plan", "retir"}
	if !slices.Equal(got, want) {
		t.Errorf("Terms = %q, want %q", got, want)
	}
}

func TestTermsIrregular(t *testing.T) {
	// The base form a question puts after "did" meets the past the
	// conversation has.
	got := Terms("When did Nate win? I won the tournament; the children went home.")
	want := []string{"nat", "win", "tournament", "child", "go", "hom"}
	if !slices.Equal(got, want) {
		t.Errorf("Terms = %q, want %q", got, want)
	}
}

func TestBaseForm(t *testing.T) {
	for in, want := range map[string]string{
		"won": "win", "bought": "buy", "went": "go", "gone": "go", "taught": "teach",
		"written": "write", "children": "child", "women": "woman",
	} {
		if got, ok := BaseForm(in); !ok || got != want {
			t.Errorf("BaseForm(%q) = %q, %v; want %q, true", in, got, ok, want)
		}
	}
	// Regular words, base forms and the left-out homographs stay as they are.
	for _, in := range []string{"win", "played", "rose", "lay", "ground", "did", ""} {
		if got, ok := BaseForm(in); ok || got != in {
			t.Errorf("BaseForm(%q) = %q, %v; want it unchanged, false", in, got, ok)
		}
	}
}

func TestSentences(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"One. Two! Three? Four", []string{"One.", "Two!", "Three?", "Four"}},
		{"Mr. Smith met Dr. Jones, e.g. at 3.5 p.m. yesterday. Then left.",
			[]string{"Mr. Smith met Dr. Jones, e.g. at 3.5 p.m. yesterday.", "Then left."}},
		{"He said \"stop.\" Then he left...  OK", []string{"He said \"stop.\"", "Then he left...", "OK"}},
		{"### Key Insights\n- Has a 401k.\n* Risk averse\n\n---\n> quoted", []string{"Key Insights", "Has a 401k.", "Risk averse", "quoted"}},
		{"私は東京に住んでいます。猫が好きです。", []string{"私は東京に住んでいます。", "猫が好きです。"}},
		{"line one\r\nline two", []string{"line one", "line two"}},
		{"version1.2.3 is out", []string{"version1.2.3 is out"}},
		{"I have an old 401k. It holds $40,000. Ask J. Smith.", []string{"I have an old 401k.", "It holds $40,000.", "Ask J. Smith."}},
	}
	for _, tt := range tests {
		if got := Sentences(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Sentences(%q) =\n %q\nwant\n %q", tt.in, got, tt.want)
		}
	}
}

func TestRank(t *testing.T) {
	sents := []string{
		"The user likes hiking.",
		"The user has a 401k retirement plan with Fidelity.",
		"They plan to retire at 60.",
		"Retirement savings are invested in index funds; retirement is a priority.",
	}
	got := Rank("What is my retirement plan?", sents, 0)
	want := []Scored{{1, 2}, {2, 1}, {3, 1}}
	if !slices.Equal(got, want) {
		t.Errorf("Rank = %v, want %v", got, want)
	}
	if got := Rank("What is my retirement plan?", sents, 1); len(got) != 1 || got[0].Index != 1 {
		t.Errorf("Rank n=1 = %v", got)
	}
	if got := Rank("what is it?", sents, 0); got != nil {
		t.Errorf("Rank with only stopwords = %v, want nil", got)
	}
}

func TestLowLevelNoAlloc(t *testing.T) {
	text := "The quick brown fox's planning jumps over the lazy dogs"
	buf := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		for i := 0; ; {
			s, e := NextWord(text, i)
			if s == e {
				break
			}
			i = e
			buf = AppendNorm(buf[:0], text[s:e])
			if !IsStopwordBytes(buf) {
				buf = Stem(buf)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("tokenising allocated %v times per run, want 0", allocs)
	}
}

func FuzzSentences(f *testing.F) {
	for _, s := range []string{"", "One. Two!", "e.g. x", "a\nb\r\nc", "。！？", "\xff.\xfe ", "- * • > ## x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		total := 0
		for _, sent := range Sentences(s) {
			if sent == "" || sent != strings.TrimSpace(sent) {
				t.Fatalf("bad sentence %q", sent)
			}
			if !strings.Contains(s, sent) {
				t.Fatalf("sentence %q is not a substring of the input", sent)
			}
			total += len(sent)
		}
		if total > len(s) {
			t.Fatalf("sentences total %d bytes, input %d", total, len(s))
		}
	})
}

func FuzzTokens(f *testing.F) {
	for _, s := range []string{"", "Hello, World!", "don't", "naïve école", "\xffx'y", "東京", "a'\u0301b"} {
		f.Add(s, "hello world")
	}
	f.Fuzz(func(t *testing.T, s, q string) {
		n := 0
		for i := 0; ; n++ {
			st, e := NextWord(s, i)
			if st < i || e < st || e > len(s) || (st == e && st != len(s)) {
				t.Fatalf("NextWord(%q, %d) = %d, %d", s, i, st, e)
			}
			if st == e {
				break
			}
			i = e
		}
		if n != CountWords(s) {
			t.Fatalf("CountWords disagrees with NextWord")
		}
		for _, w := range Words(s) {
			if !utf8.ValidString(w) || w == "" {
				t.Fatalf("bad word %q", w)
			}
		}
		terms := Terms(s)
		if ov := NewTermSet(q).Overlap(s); ov < 0 || ov > len(NewTermSet(q)) {
			t.Fatalf("Overlap = %d", ov)
		}
		if r := Rank(q, []string{s, q}, 1); len(r) > 1 {
			t.Fatalf("Rank returned %d > 1", len(r))
		}
		_ = terms
	})
}
