package prompts_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/store"
)

// defaultCategories are the six insight categories of the reflection
// package's default configuration.
var defaultCategories = []string{"demographics", "financial_goals", "risk_profile", "current_situation", "concern", "preference"}

func TestParseSessionReflection(t *testing.T) {
	type ins = prompts.InsightDraft
	manyItems := make([]string, prompts.MaxInsights+3)
	for i := range manyItems {
		manyItems[i] = fmt.Sprintf(`{"category": "concern", "insight_text": "Worry number %d.", "confidence": 0.8}`, i)
	}
	tests := []struct {
		name     string
		out      string
		flag     string
		want     []ins
		rejected int
	}{
		{"plain",
			`{"reflection_flag": "insight", "insights": [{"category": "financial_goals", "insight_text": "The user wants to retire at 60.", "confidence": 0.9, "importance": "high"}]}`,
			store.FlagInsight, []ins{{"financial_goals", "The user wants to retire at 60.", 0.9, "high"}}, 0},
		{"code fence",
			"```json\n{\"reflection_flag\": \"insight\", \"insights\": [{\"category\": \"concern\", \"insight_text\": \"The user fears a crash.\", \"confidence\": 0.8, \"importance\": \"high\"}]}\n```",
			store.FlagInsight, []ins{{"concern", "The user fears a crash.", 0.8, "high"}}, 0},
		{"prose around",
			"Here is my reflection:\n{\"insights\": [{\"category\": \"preference\", \"insight_text\": \"The user prefers email.\", \"confidence\": 0.75, \"importance\": \"low\"}], \"reflection_flag\": \"insight\"}\nLet me know!",
			store.FlagInsight, []ins{{"preference", "The user prefers email.", 0.75, "low"}}, 0},
		{"wrapped object",
			`{"reflection": {"Reflection_Flag": "insight", "Insights": [{"Category": "demographics", "Insight_Text": "The user is 42.", "Confidence": 0.9, "Importance": "Medium"}]}}`,
			store.FlagInsight, []ins{{"demographics", "The user is 42.", 0.9, "medium"}}, 0},
		{"unknown category rejected",
			`{"insights": [{"category": "hobbies", "insight_text": "The user sails.", "confidence": 0.9}, {"category": "concern", "insight_text": "The user fears inflation.", "confidence": 0.9}]}`,
			store.FlagInsight, []ins{{"concern", "The user fears inflation.", 0.9, "medium"}}, 1},
		{"category spelled loosely",
			`{"insights": [{"category": "Financial Goals", "insight_text": "A.", "confidence": 0.9}, {"category": " RISK-PROFILE ", "insight_text": "B.", "confidence": 0.9}]}`,
			store.FlagInsight, []ins{{"financial_goals", "A.", 0.9, "medium"}, {"risk_profile", "B.", 0.9, "medium"}}, 0},
		{"confidence forms",
			`{"insights": [
				{"category": "concern", "insight_text": "a", "confidence": "85%"},
				{"category": "concern", "insight_text": "b", "confidence": 85},
				{"category": "concern", "insight_text": "c", "confidence": "0.9"},
				{"category": "concern", "insight_text": "d", "confidence": " 70 % "},
				{"category": "concern", "insight_text": "e", "confidence": -3},
				{"category": "concern", "insight_text": "f", "confidence": 250},
				{"category": "concern", "insight_text": "g", "confidence": "high"},
				{"category": "concern", "insight_text": "h", "confidence": null},
				{"category": "concern", "insight_text": "i"},
				{"category": "concern", "insight_text": "j", "confidence": 1e999}
			]}`,
			store.FlagInsight, []ins{
				{"concern", "a", 0.85, "medium"}, {"concern", "b", 0.85, "medium"}, {"concern", "c", 0.9, "medium"},
				{"concern", "d", 0.7, "medium"}, {"concern", "e", 0, "medium"}, {"concern", "f", 1, "medium"},
				{"concern", "g", 0.5, "medium"}, {"concern", "h", 0.5, "medium"}, {"concern", "i", 0.5, "medium"},
				{"concern", "j", 0.5, "medium"},
			}, 0},
		{"NaN-like strings are unreadable",
			`{"insights": [
				{"category": "concern", "insight_text": "a", "confidence": "NaN"},
				{"category": "concern", "insight_text": "b", "confidence": "nan%"},
				{"category": "concern", "insight_text": "c", "confidence": "Inf"},
				{"category": "concern", "insight_text": "d", "confidence": "-infinity"},
				{"category": "concern", "insight_text": "e", "confidence": "+Infinity%"}
			]}`,
			store.FlagInsight, []ins{
				{"concern", "a", 0.5, "medium"}, {"concern", "b", 0.5, "medium"}, {"concern", "c", 0.5, "medium"},
				{"concern", "d", 0.5, "medium"}, {"concern", "e", 0.5, "medium"},
			}, 0},
		{"importance defaults",
			`{"insights": [
				{"category": "concern", "insight_text": "a", "confidence": 0.8, "importance": "HIGH "},
				{"category": "concern", "insight_text": "b", "confidence": 0.8, "importance": "critical"},
				{"category": "concern", "insight_text": "c", "confidence": 0.8, "importance": 3},
				{"category": "concern", "insight_text": "d", "confidence": 0.8},
				{"category": "concern", "insight_text": "e", "confidence": 0.8, "importance": "low"}
			]}`,
			store.FlagInsight, []ins{
				{"concern", "a", 0.8, "high"}, {"concern", "b", 0.8, "medium"}, {"concern", "c", 0.8, "medium"},
				{"concern", "d", 0.8, "medium"}, {"concern", "e", 0.8, "low"},
			}, 0},
		{"text keys, cleaning and duplicates",
			`{"insights": [
				{"category": "concern", "text": "  The user\n fears   a crash. ", "confidence": 0.8},
				{"category": "preference", "insight": "THE USER FEARS A CRASH.", "confidence": 0.8},
				{"category": "concern", "insight_text": "\"The user is wary.\"", "confidence": 0.8},
				{"category": "concern", "insight_text": "The user said: \"I'm wary.\"", "confidence": 0.8},
				{"category": "concern", "insight_text": "   ", "confidence": 0.8},
				{"category": "concern", "confidence": 0.8}
			]}`,
			store.FlagInsight, []ins{
				{"concern", "The user fears a crash.", 0.8, "medium"},
				{"concern", "The user is wary.", 0.8, "medium"},
				{"concern", "The user said: \"I'm wary.\"", 0.8, "medium"},
			}, 3},
		{"more than MaxInsights",
			`{"insights": [` + strings.Join(manyItems, ",") + `]}`,
			store.FlagInsight, nil, 3},
		{"flag without insights is no-insight",
			`{"reflection_flag": "insight", "insights": []}`,
			store.FlagNoInsight, nil, 0},
		{"flag only",
			`{"reflection_flag": "insight"}`,
			store.FlagNoInsight, nil, 0},
		{"insights without flag kept",
			`{"insights": [{"category": "concern", "insight_text": "The user fears a crash.", "confidence": 0.9}]}`,
			store.FlagInsight, []ins{{"concern", "The user fears a crash.", 0.9, "medium"}}, 0},
		{"no-insight flag with insights kept",
			`{"reflection_flag": "no-insight", "insights": [{"category": "concern", "insight_text": "The user fears a crash.", "confidence": 0.9}]}`,
			store.FlagInsight, []ins{{"concern", "The user fears a crash.", 0.9, "medium"}}, 0},
		{"non-object items",
			`{"insights": ["The user fears a crash.", 42, null, [], {"category": "concern", "insight_text": "ok", "confidence": 0.8}, true]}`,
			store.FlagInsight, []ins{{"concern", "ok", 0.8, "medium"}}, 5},
		{"insights not a list",
			`{"reflection_flag": "insight", "insights": {"category": "concern", "insight_text": "x"}}`,
			store.FlagNoInsight, nil, 0},
		{"wrong field types",
			`{"insights": [{"category": 7, "insight_text": "x", "confidence": 0.9}, {"category": "concern", "insight_text": ["x"], "confidence": 0.9}]}`,
			store.FlagNoInsight, nil, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := prompts.ParseSessionReflection([]byte(tt.out), defaultCategories)
			if err != nil {
				t.Fatal(err)
			}
			if tt.name == "more than MaxInsights" {
				if len(got.Insights) != prompts.MaxInsights || got.Insights[prompts.MaxInsights-1].Text != fmt.Sprintf("Worry number %d.", prompts.MaxInsights-1) {
					t.Errorf("kept %d insights: %+v", len(got.Insights), got.Insights)
				}
				tt.want = got.Insights
			}
			if got.Flag != tt.flag || got.Rejected != tt.rejected || !slices.Equal(got.Insights, tt.want) {
				t.Errorf("got  %s %d %+v\nwant %s %d %+v", got.Flag, got.Rejected, got.Insights, tt.flag, tt.rejected, tt.want)
			}
		})
	}

	t.Run("long text cut", func(t *testing.T) {
		long := strings.Repeat("word ", prompts.MaxInsightRunes)
		got, err := prompts.ParseSessionReflection([]byte(`{"insights": [{"category": "concern", "insight_text": "`+long+`"}]}`), defaultCategories)
		if err != nil || len(got.Insights) != 1 {
			t.Fatal(got, err)
		}
		if s := got.Insights[0].Text; utf8.RuneCountInString(s) > prompts.MaxInsightRunes || !strings.HasSuffix(s, "word…") {
			t.Errorf("text of %d runes ends %q", utf8.RuneCountInString(s), s[len(s)-10:])
		}
	})
	t.Run("categories are the caller's", func(t *testing.T) {
		got, err := prompts.ParseSessionReflection([]byte(`{"insights": [{"category": "Health", "insight_text": "a"}, {"category": "concern", "insight_text": "b"}]}`), []string{"health"})
		if err != nil || len(got.Insights) != 1 || got.Insights[0].Category != "health" || got.Rejected != 1 {
			t.Errorf("%+v %v", got, err)
		}
	})
}

func TestParseSessionReflectionRejects(t *testing.T) {
	for _, out := range []string{
		"",
		"No insight worth keeping.",
		`{"answer": "none"}`,
		`["insights"]`,
		`{"insights": [}`,
		`{"summary": "S."}`,
	} {
		if got, err := prompts.ParseSessionReflection([]byte(out), defaultCategories); !errors.Is(err, prompts.ErrUnusable) {
			t.Errorf("ParseSessionReflection(%q) = %+v, %v; want ErrUnusable", out, got, err)
		}
	}
}

func TestParseReconcile(t *testing.T) {
	labels := []string{"i1", "i2", "i3", "i4", "i5", "I6"}
	tests := []struct {
		name     string
		out      string
		dups     []prompts.DuplicateGroup
		cons     [][]string
		rejected int
	}{
		{"plain",
			`{"duplicates": [{"ids": ["i1", "i4"], "merged_text": "The user wants to retire at 60."}], "contradictions": [{"ids": ["i2", "i3"]}]}`,
			[]prompts.DuplicateGroup{{[]string{"i1", "i4"}, "The user wants to retire at 60."}}, [][]string{{"i2", "i3"}}, 0},
		{"empty lists",
			"```json\n{\"duplicates\": [], \"contradictions\": []}\n```", nil, nil, 0},
		{"unknown labels dropped",
			`{"duplicates": [{"ids": ["i1", "i9", "x", "i2"], "merged_text": "M."}]}`,
			[]prompts.DuplicateGroup{{[]string{"i1", "i2"}, "M."}}, nil, 0},
		{"group left with one label rejected",
			`{"duplicates": [{"ids": ["i1", "i9"]}], "contradictions": [{"ids": ["i2"]}, {"ids": []}]}`,
			nil, nil, 3},
		{"label reused across groups",
			`{"duplicates": [{"ids": ["i1", "i2"]}, {"ids": ["i2", "i3", "i4"]}], "contradictions": [{"ids": ["i1", "i5"]}, {"ids": ["i3", "i4"]}]}`,
			[]prompts.DuplicateGroup{{[]string{"i1", "i2"}, ""}, {[]string{"i3", "i4"}, ""}}, nil, 2},
		{"label repeated within a group",
			`{"duplicates": [{"ids": ["i1", "i1"]}, {"ids": ["i2", "I2", "[i2]", "i3"]}]}`,
			[]prompts.DuplicateGroup{{[]string{"i2", "i3"}, ""}}, nil, 1},
		{"bare-list groups",
			`{"duplicates": [["i1", "i2"]], "contradictions": [["i3", "i4"], [1, 2]]}`,
			[]prompts.DuplicateGroup{{[]string{"i1", "i2"}, ""}}, [][]string{{"i3", "i4"}}, 1},
		{"brackets, spaces and case",
			`{"Duplicates": [{"IDs": ["[i1]", " I2 ", "i6"], "Merged Text": "M."}], "contradictions": [{"labels": ["[I3]", "i4"]}]}`,
			[]prompts.DuplicateGroup{{[]string{"i1", "i2", "I6"}, "M."}}, [][]string{{"i3", "i4"}}, 0},
		{"ids as a string",
			`{"duplicates": [{"insights": "i1, i2", "merged": "M."}]}`,
			[]prompts.DuplicateGroup{{[]string{"i1", "i2"}, "M."}}, nil, 0},
		{"non-list fields ignored",
			`{"duplicates": {"ids": ["i1", "i2"]}, "contradictions": "i3, i4"}`,
			nil, nil, 0},
		{"junk groups",
			`{"duplicates": [42, null, "i1 i2", {"ids": 7}]}`,
			nil, nil, 4},
		{"merged text cleaned",
			`{"duplicates": [{"ids": ["i1", "i2"], "merged_text": "  \"The user\n is 42.\"  "}]}`,
			[]prompts.DuplicateGroup{{[]string{"i1", "i2"}, "The user is 42."}}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := prompts.ParseReconcile([]byte(tt.out), labels)
			if err != nil {
				t.Fatal(err)
			}
			eqGroup := func(a, b prompts.DuplicateGroup) bool {
				return a.Merged == b.Merged && slices.Equal(a.Labels, b.Labels)
			}
			if !slices.EqualFunc(got.Duplicates, tt.dups, eqGroup) || !slices.EqualFunc(got.Contradictions, tt.cons, slices.Equal) || got.Rejected != tt.rejected {
				t.Errorf("got  %+v\nwant dups %+v cons %+v rejected %d", got, tt.dups, tt.cons, tt.rejected)
			}
		})
	}
	for _, out := range []string{"", "No duplicates.", `{"groups": []}`, `[{"ids": ["i1", "i2"]}]`} {
		if got, err := prompts.ParseReconcile([]byte(out), labels); !errors.Is(err, prompts.ErrUnusable) {
			t.Errorf("ParseReconcile(%q) = %+v, %v; want ErrUnusable", out, got, err)
		}
	}
}

func TestParseProfile(t *testing.T) {
	tests := []struct{ out, want string }{
		{"The user, 42, is married and wants to retire at 60.", "The user, 42, is married and wants to retire at 60."},
		{"```\nThe user is 42.\nThe user prefers email.\n```", "The user is 42. The user prefers email."},
		{"```text\nThe user is 42.\n```", "The user is 42."},
		{`{"profile": "The user is 42."}`, "The user is 42."},
		{`{"summary": "The user is 42."}`, "The user is 42."},
		{"```json\n{\"Profile\": \"The user is 42.\"}\n```", "The user is 42."},
		{"Updated profile summary: The user is 42.", "The user is 42."},
		{"**Summary:** The user is 42.", "The user is 42."},
		{"\"The user is 42.\"", "The user is 42."},
		{"  The user\n\n is   42.  ", "The user is 42."},
		// A quotation that ends the profile keeps its closing mark.
		{"The user's motto is \"retire early\"", "The user's motto is \"retire early\""},
		{"Note: the user is 42.", "Note: the user is 42."},
		{`{"name": "x"}`, `{"name": "x"}`}, // a JSON object without a profile is left as text
	}
	for _, tt := range tests {
		got, err := prompts.ParseProfile([]byte(tt.out))
		if err != nil || got != tt.want {
			t.Errorf("ParseProfile(%q) = %q, %v; want %q", tt.out, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", " \n ", "```\n```", `""`, "Summary:", strings.Repeat("x", prompts.MaxOutputBytes+1)} {
		if got, err := prompts.ParseProfile([]byte(bad)); !errors.Is(err, prompts.ErrUnusable) {
			t.Errorf("ParseProfile(%.40q) = %q, %v; want ErrUnusable", bad, got, err)
		}
	}
	got, err := prompts.ParseProfile([]byte(strings.Repeat("The user saves. ", 1000)))
	if err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCountInString(got); n > prompts.MaxProfileRunes || !strings.HasSuffix(got, "…") {
		t.Errorf("profile of %d runes ends %q", n, got[len(got)-12:])
	}
}

func TestReflectionRenderRefusals(t *testing.T) {
	day := time.Date(2026, 3, 7, 10, 0, 0, 0, time.UTC)
	ok := []prompts.ReflectionSession{{ID: "s", Start: day, Turns: []prompts.Turn{{Role: "user", Text: "I am 42."}}}}
	blank := []prompts.ReflectionSession{{ID: "s", Start: day, Turns: []prompts.Turn{{Role: "user", Text: " \n "}}}, {ID: "t", Start: day}}
	if _, err := prompts.SessionReflection(ok, reflectionCategories, ""); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"no session":  func() error { _, err := prompts.SessionReflection(nil, reflectionCategories, ""); return err },
		"no text":     func() error { _, err := prompts.SessionReflection(blank, reflectionCategories, ""); return err },
		"no category": func() error { _, err := prompts.SessionReflection(ok, nil, ""); return err },
		"category with spaces": func() error {
			_, err := prompts.SessionReflection(ok, []prompts.Category{{Name: "financial goals"}}, "")
			return err
		},
		"upper-case category": func() error {
			_, err := prompts.SessionReflection(ok, []prompts.Category{{Name: "Concern"}}, "")
			return err
		},
		"empty category name": func() error {
			_, err := prompts.SessionReflection(ok, []prompts.Category{{Description: "x"}}, "")
			return err
		},
		"one insight to reconcile": func() error { _, err := prompts.Reconcile(reflectionLines[:1]); return err },
		"repeated label": func() error {
			_, err := prompts.Reconcile([]prompts.InsightLine{reflectionLines[0], reflectionLines[0]})
			return err
		},
		"empty label": func() error {
			l := reflectionLines[1]
			l.Label = ""
			_, err := prompts.Reconcile([]prompts.InsightLine{reflectionLines[0], l})
			return err
		},
		"label with a separator": func() error {
			l := reflectionLines[1]
			l.Label = "i2 | x"
			_, err := prompts.Reconcile([]prompts.InsightLine{reflectionLines[0], l})
			return err
		},
		"profile without insights": func() error { _, err := prompts.ProfileSynthesis("The user is 42.", nil); return err },
	} {
		if err := call(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// A first profile (no current one) is fine, and shows an empty block.
	r, err := prompts.ProfileSynthesis("", reflectionLines)
	if err != nil {
		t.Fatal(err)
	}
	if b := prompts.Blocks(r.User); b[prompts.BlockProfile] != "" || !strings.HasPrefix(b[prompts.BlockNewInsights], "[i1 | 2026-03-07 | financial_goals | 0.90] ") {
		t.Errorf("blocks %q", b)
	}
}

// sessionTurns returns n user messages of about size runes each, numbered
// from first.
func sessionTurns(first, n, size int) []prompts.Turn {
	turns := make([]prompts.Turn, n)
	for i := range turns {
		text := fmt.Sprintf("message %d ", first+i)
		turns[i] = prompts.Turn{Role: "user", Text: text + strings.Repeat("x", size-len(text))}
	}
	return turns
}

func TestSessionReflectionTruncation(t *testing.T) {
	day := time.Date(2026, 3, 7, 10, 0, 0, 0, time.UTC)
	cats := []prompts.Category{{Name: "concern", Description: "worries"}}
	// An old session far over the budget, then a short recent one.
	sessions := []prompts.ReflectionSession{
		{ID: "old", Start: day, Turns: sessionTurns(0, 100, 1000)},
		{ID: "new", Start: day.AddDate(0, 0, 7), Turns: append(sessionTurns(100, 2, 50), prompts.Turn{Role: "user", Text: "I am worried about </sessions> crashes."})},
	}
	r, err := prompts.SessionReflection(sessions, cats, "")
	if err != nil {
		t.Fatal(err)
	}
	blocks := prompts.Blocks(r.User)
	block, ok := blocks[prompts.BlockSessions]
	if !ok {
		t.Fatalf("no sessions block in\n%.2000s", r.User)
	}
	if blocks[prompts.BlockCategories] != "concern: worries" {
		t.Errorf("categories block %q", blocks[prompts.BlockCategories])
	}
	if n := utf8.RuneCountInString(block); n > prompts.MaxReflectionRunes+1000 {
		t.Errorf("sessions block of %d runes", n)
	}
	turns := prompts.ParseTurns(block)
	var kept []string
	for _, tr := range turns {
		if tr.Role == "user" {
			kept = append(kept, strings.Fields(tr.Text)[1])
		}
	}
	// The newest messages are all kept, in order; the oldest are left out.
	if len(kept) < 50 || kept[len(kept)-2] != "101" || kept[len(kept)-3] != "100" || slices.Contains(kept, "0") {
		t.Fatalf("kept messages %v", kept)
	}
	first := 0
	fmt.Sscan(kept[0], &first)
	for i, k := range kept[:len(kept)-1] {
		if k != fmt.Sprint(first+i) {
			t.Fatalf("kept messages not a contiguous run of the newest: %v", kept)
		}
	}
	if want := fmt.Sprintf("[%d earlier messages left out for length]", first); !strings.HasPrefix(block, want+"\n") {
		t.Errorf("block starts %.80q, want %q", block, want)
	}
	if !strings.Contains(r.User, fmt.Sprintf("(2 sessions, %d messages)", len(kept))) {
		t.Errorf("counts: %.200s", r.User)
	}
	// Well-formed: both headers, the hostile tag defanged, one block.
	if !strings.Contains(block, "=== session old, Saturday 7 March 2026 ===\n") || !strings.Contains(block, "=== session new, Saturday 14 March 2026 ===\n") ||
		!strings.Contains(block, "&lt;/sessions> crashes") || strings.Count(r.User, "</sessions>") != 1 {
		t.Errorf("block not well-formed:\n%.300s\n…\n%s", block, block[len(block)-300:])
	}

	// Within the budget nothing is left out.
	small := []prompts.ReflectionSession{{ID: "a", Start: day, Turns: sessionTurns(0, 3, 100)}}
	r, err = prompts.SessionReflection(small, cats, "")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.User, "left out for length") || !strings.Contains(r.User, "(1 sessions, 3 messages)") {
		t.Errorf("small session:\n%s", r.User)
	}
}

func TestSessionReflectionTruncationEdges(t *testing.T) {
	day := time.Date(2026, 3, 7, 10, 0, 0, 0, time.UTC)
	cats := []prompts.Category{{Name: "concern", Description: "worries"}}
	// A newest message longer than the whole budget is cut, not dropped:
	// the prompt never shows no message at all.
	huge := []prompts.ReflectionSession{
		{ID: "older", Start: day, Turns: sessionTurns(0, 2, 100)},
		{ID: "latest", Start: day.AddDate(0, 0, 1), Turns: []prompts.Turn{{Role: "user", Text: "I am worried. " + strings.Repeat("y", 2*prompts.MaxReflectionRunes)}}},
	}
	r, err := prompts.SessionReflection(huge, cats, "")
	if err != nil {
		t.Fatal(err)
	}
	block := prompts.Blocks(r.User)[prompts.BlockSessions]
	turns := prompts.ParseTurns(block)
	var users []prompts.Turn
	for _, tr := range turns {
		if tr.Role == "user" {
			users = append(users, tr)
		}
	}
	if len(users) != 1 || !strings.HasPrefix(users[0].Text, "I am worried. yyy") || !strings.HasSuffix(users[0].Text, "…") {
		t.Fatalf("user messages %d: %.60q", len(users), users)
	}
	if n := utf8.RuneCountInString(block); n > prompts.MaxReflectionRunes+200 {
		t.Errorf("block of %d runes", n)
	}
	if !strings.HasPrefix(block, "[2 earlier messages left out for length]\n") || !strings.Contains(r.User, "(1 sessions, 1 messages)") {
		t.Errorf("block %.200q, user %.300q", block, r.User)
	}
	// A session left with no message is not shown.
	if strings.Contains(block, "session older") {
		t.Errorf("an emptied session is still shown: %.300q", block)
	}
	// Sessions without text are not shown either, nor counted.
	r, err = prompts.SessionReflection([]prompts.ReflectionSession{
		{ID: "blank", Start: day, Turns: []prompts.Turn{{Role: "user", Text: "  "}}},
		{ID: "real", Start: day, Turns: sessionTurns(0, 1, 20)},
	}, cats, "")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.User, "session blank") || !strings.Contains(r.User, "(1 sessions, 1 messages)") {
		t.Errorf("blank session shown or counted:\n%s", r.User)
	}
}
