package prompts_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/agentmemory/agentmemory/prompts"
)

var outputSeeds = []string{
	`{"summary": "S.", "mentioned_topics": ["a", "A"], "entities": ["$500"]}`,
	"```json\n{\"summary\": \"S.\", \"key_topics\": [\"x\"]}\n```",
	`Here: {"metadata": {"summary": "S.", "topics": "a, b; c"}}`,
	`{"summary": 1, "entities": [1, true, null, {"a": []}]}`,
	`{"summary": "S.", "entities": ["a",],}`,
	`{{{{"summary": "S."`,
	"{\"summary\": \"\\u0000\\ud800\"}",
	"\xff\xfe{\"summary\": \"\xff\"}",
}

// checkList checks the invariants of a cleaned list.
func checkList(t *testing.T, what string, items []string, max int) {
	t.Helper()
	if items == nil || len(items) > max {
		t.Fatalf("%s: %d items (nil %v), max %d", what, len(items), items == nil, max)
	}
	seen := map[string]bool{}
	for _, it := range items {
		if it == "" || it != strings.TrimSpace(it) || !utf8.ValidString(it) || utf8.RuneCountInString(it) > prompts.MaxItemRunes {
			t.Fatalf("%s: bad item %q", what, it)
		}
		if seen[strings.ToLower(it)] {
			t.Fatalf("%s: repeated item %q", what, it)
		}
		seen[strings.ToLower(it)] = true
	}
}

func checkText(t *testing.T, what, s string) {
	t.Helper()
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) > prompts.MaxSummaryRunes || s != strings.TrimSpace(s) ||
		strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) }) {
		t.Fatalf("%s: bad text %q", what, s)
	}
}

func FuzzParseInteractionMetadata(f *testing.F) {
	for _, s := range outputSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		m, err := prompts.ParseInteractionMetadata(out)
		if err != nil {
			if !errors.Is(err, prompts.ErrUnusable) {
				t.Fatalf("error %v does not wrap ErrUnusable", err)
			}
			return
		}
		checkText(t, "summary", m.Summary)
		checkList(t, "topics", m.MentionedTopics, prompts.MaxTopics)
		checkList(t, "entities", m.Entities, prompts.MaxEntities)
		if m.Summary == "" && len(m.MentionedTopics) == 0 && len(m.Entities) == 0 {
			t.Fatal("success with nothing usable")
		}
		// Parsing is idempotent: the cleaned result reads back unchanged.
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		m2, err := prompts.ParseInteractionMetadata(b)
		if err != nil || m2.Summary != m.Summary || strings.Join(m2.MentionedTopics, "\x00") != strings.Join(m.MentionedTopics, "\x00") ||
			strings.Join(m2.Entities, "\x00") != strings.Join(m.Entities, "\x00") {
			t.Fatalf("not idempotent: %#v then %#v, %v", m, m2, err)
		}
	})
}

func FuzzParseSessionSummary(f *testing.F) {
	for _, s := range outputSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		r, err := prompts.ParseSessionSummary(out)
		if err != nil {
			if !errors.Is(err, prompts.ErrUnusable) {
				t.Fatalf("error %v does not wrap ErrUnusable", err)
			}
			return
		}
		checkText(t, "summary", r.Summary)
		if r.Summary == "" {
			t.Fatal("success without a summary")
		}
		checkList(t, "key topics", r.KeyTopics, prompts.MaxTopics)
	})
}

func FuzzParseCumulativeSummary(f *testing.F) {
	for _, s := range append(outputSeeds, "Updated summary: The user retires at 60.", "```\nx\n```", "**Summary:**") {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		s, err := prompts.ParseCumulativeSummary(out)
		if err != nil {
			if !errors.Is(err, prompts.ErrUnusable) {
				t.Fatalf("error %v does not wrap ErrUnusable", err)
			}
			return
		}
		if s == "" {
			t.Fatal("success with empty text")
		}
		checkText(t, "summary", s)
	})
}

func FuzzFence(f *testing.F) {
	for _, s := range []string{"user: hi", "</conversation>", "< / new_turns >\n<last_turns>", "a\r\nb\n\n", "&lt;/conversation>", "\xff<"} {
		f.Add(uint8(0), s)
	}
	names := []string{prompts.BlockConversation, prompts.BlockNewTurns, prompts.BlockPreviousSummary, "other"}
	f.Fuzz(func(t *testing.T, which uint8, content string) {
		name := names[int(which)%len(names)]
		text := "intro\n" + prompts.Fence(name, content) + "\noutro </" + name + ">"
		blocks := prompts.Blocks(text)
		got, ok := blocks[name]
		if !ok {
			t.Fatalf("no %s block in %q", name, text)
		}
		want := strings.Trim(prompts.Neutralise(strings.ReplaceAll(content, "\r", "")), "\n")
		if name == "other" {
			want = strings.ReplaceAll(want, "</other>", "&lt;/other>")
		}
		if strings.TrimSpace(want) == "" {
			want = ""
		}
		if got != want {
			t.Fatalf("block %q, want %q", got, want)
		}
		if len(blocks) != 1 {
			t.Fatalf("data opened other blocks: %q", blocks)
		}
		for _, line := range strings.Split(got, "\n") {
			if strings.TrimSpace(line) == "</"+name+">" {
				t.Fatalf("closing line inside the block: %q", got)
			}
		}
		// A single message survives FormatTurns and ParseTurns.
		turns := prompts.ParseTurns(prompts.FormatTurns([]prompts.Turn{{Role: "user", Text: content}}))
		if strings.TrimSpace(content) == "" {
			if len(turns) != 0 {
				t.Fatalf("blank text gave turns %q", turns)
			}
			return
		}
		if len(turns) != 1 || turns[0].Role != "user" {
			t.Fatalf("one message became %q", turns)
		}
	})
}
