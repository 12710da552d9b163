package prompts_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentmemory/agentmemory/prompts"
)

func TestParseInteractionMetadata(t *testing.T) {
	long := strings.Repeat("word ", 600)
	tests := []struct {
		name string
		out  string
		want prompts.Metadata
	}{
		{"plain", `{"summary": "The user plans a 401k rollover.", "mentioned_topics": ["rollover", "401k"], "entities": ["401k", "$500"]}`,
			prompts.Metadata{"The user plans a 401k rollover.", []string{"rollover", "401k"}, []string{"401k", "$500"}}},
		{"code fence and prose", "Sure! Here is the metadata:\n```json\n{\"summary\": \"S.\", \"mentioned_topics\": [\"taxes\"], \"entities\": []}\n```\nHope this helps.",
			prompts.Metadata{"S.", []string{"taxes"}, []string{}}},
		{"wrapped once", `{"metadata": {"Summary": "S.", "Topics": ["a"]}}`,
			prompts.Metadata{"S.", []string{"a"}, []string{}}},
		{"key variants", `{"SUMMARY": "S.", "mentioned topics": ["x"], "Named-Entities": ["Fidelity"]}`,
			prompts.Metadata{"S.", []string{"x"}, []string{"Fidelity"}}},
		{"wrong types ignored", `{"summary": 42, "mentioned_topics": {"a": 1}, "entities": ["IRA", 2030, 1.5, true, null, {"x": 1}, ["y"]]}`,
			prompts.Metadata{"", []string{}, []string{"IRA", "2030", "1.5"}}},
		{"list as string", `{"summary": "S.", "mentioned_topics": "retirement, taxes; estate planning"}`,
			prompts.Metadata{"S.", []string{"retirement", "taxes", "estate planning"}, []string{}}},
		{"clean, dedupe, cap", `{"summary": "  S.\n\n two  ", "mentioned_topics": ["  a ", "A", "", "   ", "b", "- c", "\"d\"", "e", "f", "g", "` + strings.Repeat("x", 101) + `"], "entities": ["Roth IRA", "roth ira", "ROTH IRA", "!!!"]}`,
			prompts.Metadata{"S. two", []string{"a", "b", "c", "d", "e"}, []string{"Roth IRA"}}},
		{"skips an unrelated object first", `Example: {"foo": 1}. Answer: {"summary": "S."}`,
			prompts.Metadata{"S.", []string{}, []string{}}},
		{"skips braces in prose", `I {think} {"summary": "S.", "entities": ["$5"]}`,
			prompts.Metadata{"S.", []string{}, []string{"$5"}}},
		{"control characters", "{\"summary\": \"a\\u0000b\\u0007 c\\u200b\"}",
			prompts.Metadata{"ab c\u200b", []string{}, []string{}}},
		// What models answer without JSON mode.
		{"trailing commas", `{"summary": "S.", "entities": ["a",],}`,
			prompts.Metadata{"S.", []string{}, []string{"a"}}},
		{"trailing commas in a fence after prose", "Here you go:\n```json\n{\n  \"summary\": \"S.\",\n  \"mentioned_topics\": [\n    \"x\",\n  ],\n}\n```",
			prompts.Metadata{"S.", []string{"x"}, []string{}}},
		{"comments", "{\n  // the gist\n  \"summary\": \"S. // not a comment\", /* topics */ \"entities\": [\"a/b\"]\n}",
			prompts.Metadata{"S. // not a comment", []string{}, []string{"a/b"}}},
		{"reasoning first", "<think>Draft: {\"summary\": \"wrong\"} — no, shorter.</think>\n{\"summary\": \"S.\"}",
			prompts.Metadata{"S.", []string{}, []string{}}},
		{"reasoning in capitals, twice", "<THINK>{\"summary\": \"a\"}</THINK><thinking>{\"summary\": \"b\"}</thinking>{\"summary\": \"S.\"}",
			prompts.Metadata{"S.", []string{}, []string{}}},
		{"unclosed reasoning is read as it is", `<think>{"summary": "S."}`,
			prompts.Metadata{"S.", []string{}, []string{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := prompts.ParseInteractionMetadata([]byte(tt.out))
			if err != nil {
				t.Fatal(err)
			}
			if got.Summary != tt.want.Summary || !slices.Equal(got.MentionedTopics, tt.want.MentionedTopics) || !slices.Equal(got.Entities, tt.want.Entities) {
				t.Errorf("got  %#v\nwant %#v", got, tt.want)
			}
		})
	}

	t.Run("long summary and many entities", func(t *testing.T) {
		var ents []string
		for i := range 50 {
			ents = append(ents, "entity "+itoa(i))
		}
		out := `{"summary": "` + long + `", "entities": ["` + strings.Join(ents, `","`) + `"]}`
		got, err := prompts.ParseInteractionMetadata([]byte(out))
		if err != nil {
			t.Fatal(err)
		}
		if n := utf8.RuneCountInString(got.Summary); n > prompts.MaxSummaryRunes || !strings.HasSuffix(got.Summary, "…") {
			t.Errorf("summary of %d runes, ends %q", n, got.Summary[len(got.Summary)-8:])
		}
		if !slices.Equal(got.Entities, ents[:prompts.MaxEntities]) {
			t.Errorf("entities %v", got.Entities)
		}
	})
}

func TestParseRejects(t *testing.T) {
	tests := []struct{ name, out string }{
		{"empty", ""},
		{"prose", "I could not find anything worth noting."},
		{"array", `["summary"]`},
		{"empty object", `{}`},
		{"nothing usable", `{"summary": "  ", "mentioned_topics": ["", " "], "entities": [null]}`},
		{"unrelated object", `{"answer": "yes", "other": 1}`},
		{"truncated", `{"summary": "The user`},
		{"truncated after a comma", `{"summary": "S.",`},
		{"unclosed comment", `{"summary": "S." /* `},
		{"only reasoning", `<think>{"summary": "S."}</think>I cannot say.`},
		{"too long", `{"summary": "` + strings.Repeat("a", prompts.MaxOutputBytes) + `"}`},
		{"many braces", strings.Repeat("{", 100) + `"summary": "S."}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := prompts.ParseInteractionMetadata([]byte(tt.out))
			if !errors.Is(err, prompts.ErrUnusable) {
				t.Errorf("ParseInteractionMetadata = %#v, %v; want ErrUnusable", m, err)
			}
			s, err := prompts.ParseSessionSummary([]byte(tt.out))
			if !errors.Is(err, prompts.ErrUnusable) {
				t.Errorf("ParseSessionSummary = %#v, %v; want ErrUnusable", s, err)
			}
		})
	}
}

func TestParseSessionSummary(t *testing.T) {
	got, err := prompts.ParseSessionSummary([]byte("```\n{\"summary\": \"The user chose a Roth IRA.\", \"topics\": [\"Roth IRA\", \"roth ira\", \"rollover\", 7, \"a\", \"b\", \"c\", \"d\"]}\n```"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Summary != "The user chose a Roth IRA." || !slices.Equal(got.KeyTopics, []string{"Roth IRA", "rollover", "7", "a", "b"}) {
		t.Errorf("got %#v", got)
	}
	// Topics without a summary are no session record.
	if _, err := prompts.ParseSessionSummary([]byte(`{"key_topics": ["a"]}`)); !errors.Is(err, prompts.ErrUnusable) {
		t.Errorf("no summary: %v", err)
	}
	// But they are usable interaction metadata.
	if m, err := prompts.ParseInteractionMetadata([]byte(`{"key_topics": ["a"]}`)); err != nil || !slices.Equal(m.MentionedTopics, []string{"a"}) {
		t.Errorf("metadata from topics only: %#v, %v", m, err)
	}
}

func TestParseCumulativeSummary(t *testing.T) {
	tests := []struct{ out, want string }{
		{"The user wants to retire at 60.", "The user wants to retire at 60."},
		{"  Updated summary:\n\nThe user wants\n to retire at 60.  ", "The user wants to retire at 60."},
		{"**Summary:** The user wants to retire.", "The user wants to retire."},
		{"```text\nThe user wants to retire.\n```", "The user wants to retire."},
		{"\"The user wants to retire.\"", "The user wants to retire."},
		{`{"summary": "From JSON."}`, "From JSON."},
		{"Note: the user's summary: keep it.", "Note: the user's summary: keep it."},
		{"Ratio 3:1 was chosen.", "Ratio 3:1 was chosen."},
		{"a\x00b\xffc", "ab\uFFFDc"},
		{"<think>\nThe user said 59, then 60.\n</think>\n\nThe user wants to retire at 60.", "The user wants to retire at 60."},
	}
	for _, tt := range tests {
		got, err := prompts.ParseCumulativeSummary([]byte(tt.out))
		if err != nil || got != tt.want {
			t.Errorf("ParseCumulativeSummary(%q) = %q, %v; want %q", tt.out, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "  \n ", "```\n```", "Summary:", `""`, "<think>all of it</think>"} {
		if got, err := prompts.ParseCumulativeSummary([]byte(bad)); !errors.Is(err, prompts.ErrUnusable) {
			t.Errorf("ParseCumulativeSummary(%q) = %q, %v; want ErrUnusable", bad, got, err)
		}
	}
	got, err := prompts.ParseCumulativeSummary([]byte(strings.Repeat("long ", 1000)))
	if err != nil || utf8.RuneCountInString(got) > prompts.MaxSummaryRunes {
		t.Errorf("long summary: %d runes, %v", utf8.RuneCountInString(got), err)
	}
}

func TestCleanText(t *testing.T) {
	for in, want := range map[string]string{
		"  a\tb\n\nc  ":              "a b c",
		"\uFEFFbom\x00 and\x07 bell": "bom and bell",
		"bad \xff byte":              "bad \uFFFD byte",
		"":                           "",
	} {
		if got := prompts.CleanText(in); got != want {
			t.Errorf("CleanText(%q) = %q, want %q", in, got, want)
		}
	}
}
