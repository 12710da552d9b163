package retrieval

import (
	"strings"
	"testing"
	"time"
)

func TestResolveDates(t *testing.T) {
	ref := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC) // a Monday
	cases := map[string]string{
		"I went there yesterday.":               "I went there yesterday [2023-05-07].",
		"See you tomorrow!":                     "See you tomorrow [2023-05-09]!",
		"It was the day before yesterday":       "It was the day before yesterday [2023-05-06]",
		"We met last Friday at noon":            "We met last Friday [2023-05-05] at noon",
		"Call me next Monday":                   "Call me next Monday [2023-05-15]",
		"The race was last Monday":              "The race was last Monday [2023-05-01]",
		"I painted it last week":                "I painted it last week [week of 2023-05-01]",
		"last weekend was fun":                  "last weekend [weekend of 2023-05-06] was fun",
		"We moved last month":                   "We moved last month [April 2023]",
		"I started two weeks ago":               "I started two weeks ago [week of 2023-04-24]",
		"3 days ago I signed":                   "3 days ago [2023-05-05] I signed",
		"a year ago":                            "a year ago [2022]",
		"next year we retire":                   "next year [2024] we retire",
		"nothing relative on 8 May 2023 here":   "nothing relative on 8 May 2023 here",
		"Yesterday and today":                   "Yesterday [2023-05-07] and today [2023-05-08]",
		"yesterdays are not words I know about": "yesterdays are not words I know about",
	}
	for in, want := range cases {
		if got := ResolveDates(in, ref); got != want {
			t.Errorf("ResolveDates(%q)\n got %q\nwant %q", in, got, want)
		}
	}
	if got := ResolveDates("yesterday", time.Time{}); got != "yesterday" {
		t.Errorf("zero reference changed the text: %q", got)
	}
	sunday := time.Date(2023, 5, 7, 9, 0, 0, 0, time.UTC)
	if got := ResolveDates("last weekend", sunday); got != "last weekend [weekend of 2023-04-29]" {
		t.Errorf("on a Sunday: %q", got)
	}
	if got := ResolveDates("next weekend", sunday); got != "next weekend [weekend of 2023-05-13]" {
		t.Errorf("on a Sunday: %q", got)
	}
}

func FuzzResolveDates(f *testing.F) {
	for _, s := range []string{"yesterday", "last Friday", "10 years ago", "999 days ago", "next weekend", "", "a b c"} {
		f.Add(s)
	}
	ref := time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		got := ResolveDates(s, ref)
		// Resolving only adds annotations, at most one per expression found.
		added := strings.Count(got, " [") - strings.Count(s, " [")
		if len(got) < len(s) || added < 0 || added > len(relativeRE.FindAllStringIndex(s, -1)) {
			t.Fatalf("ResolveDates(%q) = %q", s, got)
		}
		if ResolveDates(s, time.Time{}) != s {
			t.Fatalf("zero reference changed %q", s)
		}
	})
}
