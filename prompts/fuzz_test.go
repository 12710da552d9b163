package prompts_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/store"
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

var reflectionSeeds = []string{
	`{"reflection_flag": "insight", "insights": [{"category": "financial_goals", "insight_text": "The user wants to retire at 60.", "confidence": 0.9, "importance": "high"}]}`,
	"```json\n{\"insights\": [{\"category\": \"Financial Goals\", \"text\": \"A.\", \"confidence\": \"85%\"}, {\"category\": \"concern\", \"insight\": \"a.\"}]}\n```",
	`Sure: {"reflection": {"Reflection_Flag": "no-insight", "Insights": []}}`,
	`{"insights": ["x", 1, null, [], {"category": "hobbies", "insight_text": "y"}, {"category": "concern", "insight_text": "\"z\"", "confidence": "NaN", "importance": "HIGH"}]}`,
	`{"insights": [{"category": "concern", "insight_text": "a", "confidence": "-Inf"}, {"category": "concern", "insight_text": "b", "confidence": 1e999}]}`,
	`{"reflection_flag": "insight"}`,
	"{\"insights\": [{\"category\": \"concern\", \"insight_text\": \"\\u0000\\ud800\xff\", \"confidence\": 250}]}",
}

func FuzzParseSessionReflection(f *testing.F) {
	for _, s := range append(reflectionSeeds, outputSeeds...) {
		f.Add([]byte(s))
	}
	cats := []string{"demographics", "financial_goals", "risk_profile", "current_situation", "concern", "preference"}
	f.Fuzz(func(t *testing.T, out []byte) {
		r, err := prompts.ParseSessionReflection(out, cats)
		if err != nil {
			if !errors.Is(err, prompts.ErrUnusable) {
				t.Fatalf("error %v does not wrap ErrUnusable", err)
			}
			return
		}
		if (r.Flag == store.FlagInsight) != (len(r.Insights) > 0) || (r.Flag != store.FlagInsight && r.Flag != store.FlagNoInsight) {
			t.Fatalf("flag %q with %d insights", r.Flag, len(r.Insights))
		}
		if len(r.Insights) > prompts.MaxInsights || r.Rejected < 0 {
			t.Fatalf("%d insights, %d rejected", len(r.Insights), r.Rejected)
		}
		seen := map[string]bool{}
		for _, in := range r.Insights {
			if !slices.Contains(cats, in.Category) {
				t.Fatalf("category %q not offered", in.Category)
			}
			if !(in.Confidence >= 0 && in.Confidence <= 1) {
				t.Fatalf("confidence %v", in.Confidence)
			}
			if in.Importance != "high" && in.Importance != "medium" && in.Importance != "low" {
				t.Fatalf("importance %q", in.Importance)
			}
			if in.Text == "" || !utf8.ValidString(in.Text) || utf8.RuneCountInString(in.Text) > prompts.MaxInsightRunes || in.Text != strings.TrimSpace(in.Text) ||
				strings.ContainsFunc(in.Text, unicode.IsControl) {
				t.Fatalf("bad text %q", in.Text)
			}
			if seen[strings.ToLower(in.Text)] {
				t.Fatalf("repeated text %q", in.Text)
			}
			seen[strings.ToLower(in.Text)] = true
		}
		// Parsing is idempotent: the kept insights read back unchanged.
		type item struct {
			Category   string  `json:"category"`
			Text       string  `json:"insight_text"`
			Confidence float64 `json:"confidence"`
			Importance string  `json:"importance"`
		}
		items := []item{}
		for _, in := range r.Insights {
			items = append(items, item{in.Category, in.Text, in.Confidence, in.Importance})
		}
		b, err := json.Marshal(map[string]any{"reflection_flag": r.Flag, "insights": items})
		if err != nil {
			t.Fatal(err)
		}
		r2, err := prompts.ParseSessionReflection(b, cats)
		if err != nil || r2.Flag != r.Flag || r2.Rejected != 0 || !slices.Equal(r2.Insights, r.Insights) {
			t.Fatalf("not idempotent: %+v then %+v, %v", r, r2, err)
		}
	})
}

func FuzzParseReconcile(f *testing.F) {
	for _, s := range []string{
		`{"duplicates": [{"ids": ["i1", "i4"], "merged_text": "M."}], "contradictions": [{"ids": ["i2", "i3"]}]}`,
		`{"duplicates": [["i1", "i1"], {"labels": "[i2], I2, i3"}], "contradictions": [{"ids": ["i3", "i9"]}, ["i4", "i5"]]}`,
		"```json\n{\"Duplicates\": [{\"IDs\": [\"[I1]\", \" i2 \"], \"Merged Text\": \"\\\"x\\\"\"}]}\n```",
		`{"result": {"duplicates": [42, null, "i1 i2", {"ids": 7}], "contradictions": {}}}`,
		`{"duplicates": [{"ids": [1, 2, "i1", "i2"], "merged_text": "` + strings.Repeat("é", 700) + `"}]}`,
	} {
		f.Add([]byte(s))
	}
	labels := []string{"i1", "i2", "i3", "i4", "I5"}
	f.Fuzz(func(t *testing.T, out []byte) {
		r, err := prompts.ParseReconcile(out, labels)
		if err != nil {
			if !errors.Is(err, prompts.ErrUnusable) {
				t.Fatalf("error %v does not wrap ErrUnusable", err)
			}
			return
		}
		used := map[string]bool{}
		check := func(ids []string) {
			if len(ids) < 2 {
				t.Fatalf("group of %d: %q", len(ids), ids)
			}
			for _, id := range ids {
				if !slices.Contains(labels, id) {
					t.Fatalf("label %q not given", id)
				}
				if used[id] {
					t.Fatalf("label %q used twice in %+v", id, r)
				}
				used[id] = true
			}
		}
		for _, g := range r.Duplicates {
			check(g.Labels)
			if !utf8.ValidString(g.Merged) || utf8.RuneCountInString(g.Merged) > prompts.MaxInsightRunes || strings.ContainsFunc(g.Merged, unicode.IsControl) {
				t.Fatalf("bad merged text %q", g.Merged)
			}
		}
		for _, ids := range r.Contradictions {
			check(ids)
		}
		if r.Rejected < 0 {
			t.Fatalf("rejected %d", r.Rejected)
		}
	})
}

func FuzzParseProfile(f *testing.F) {
	for _, s := range append(outputSeeds, "The user is 42.", "```text\nProfile summary: \"x\"\n```", `{"profile": "P."}`, `"The user said "hi""`, "\"\"", "Summary:") {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		p, err := prompts.ParseProfile(out)
		if err != nil {
			if !errors.Is(err, prompts.ErrUnusable) {
				t.Fatalf("error %v does not wrap ErrUnusable", err)
			}
			return
		}
		if p == "" || !utf8.ValidString(p) || utf8.RuneCountInString(p) > prompts.MaxProfileRunes || p != strings.TrimSpace(p) ||
			strings.ContainsFunc(p, unicode.IsControl) {
			t.Fatalf("bad profile %q", p)
		}
	})
}

// FuzzFindObject checks the lenient extractor: it never fails on any
// input but with ErrUnusable, what it returns has a wanted key, and a
// valid object with a wanted key is found wherever it is put — after
// prose without braces, inside a code fence, after a reasoning block,
// with trailing commas — and read back equal.
func FuzzFindObject(f *testing.F) {
	for _, s := range outputSeeds {
		f.Add([]byte(s), "Here it is:", "Thanks!", "note", true)
	}
	f.Add([]byte(`{"a": [1, 2,], /* c */ "b": {"summary": "x",},}`), "<think>{", "}", "", false)
	f.Add([]byte("{\"x\": \"// \\\" /*\"}"), "", "```", "y", true)
	f.Fuzz(func(t *testing.T, out []byte, prose, after, value string, commas bool) {
		obj, err := prompts.FindObject(out, "summary", "topics")
		if err != nil {
			if !errors.Is(err, prompts.ErrUnusable) {
				t.Fatalf("error %v does not wrap ErrUnusable", err)
			}
		} else if obj["summary"] == nil && obj["topics"] == nil {
			t.Fatalf("returned %v without a wanted key", obj)
		}

		// A known object, wrapped as models wrap it, is found.
		v, err := json.Marshal(value)
		if err != nil {
			t.Fatal(err)
		}
		b := []byte(`{"summary":` + string(v) + `,"topics":[` + string(v) + `,1]}`)
		text := string(b)
		if commas {
			text = `{"summary":` + string(v) + `,"topics":[` + string(v) + `,1,],}`
		}
		prose = strings.Map(func(r rune) rune {
			if r == '{' || r == '<' {
				return -1
			}
			return r
		}, prose)
		in := "<think>" + prose + " {\"summary\": \"draft\"}</think>" + prose + "\n```json\n" + text + "\n```\n" + after
		got, err := prompts.FindObject([]byte(in), "summary")
		if err != nil {
			t.Fatalf("FindObject(%q): %v", in, err)
		}
		var gotSummary, wantSummary struct {
			Summary string `json:"summary"`
		}
		_ = json.Unmarshal(b, &wantSummary) // value as JSON carries it
		if err := json.Unmarshal(got["summary"], &gotSummary.Summary); err != nil || gotSummary != wantSummary {
			t.Fatalf("FindObject(%q): summary %s, want %q", in, got["summary"], value)
		}
	})
}
