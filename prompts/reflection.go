package prompts

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmemory/agentmemory/store"
)

// Limits of the reflection prompts.
const (
	// MaxInsights is the most insights one session reflection may return;
	// ParseSessionReflection keeps the first MaxInsights.
	MaxInsights = 12
	// MaxInsightRunes cuts an insight's text.
	MaxInsightRunes = 600
	// ProfileWords is the profile length profile_synthesis asks for.
	ProfileWords = 300
	// MaxProfileRunes cuts a parsed profile.
	MaxProfileRunes = 4000
	// MaxReflectionRunes bounds the messages of the <sessions> block of
	// session_reflection (headers and roles aside): beyond it the oldest
	// messages are left out, and the block says so; a newest message over
	// it on its own is cut.
	MaxReflectionRunes = 60000
	// MinConfidence is the confidence below which session_reflection is
	// told an insight will not be kept (the reflection package's default
	// threshold).
	MinConfidence = 0.7
)

// Category is an insight category offered to session_reflection.
type Category struct {
	// Name is what the model answers: a lower-case identifier
	// ("financial_goals").
	Name string
	// Description says what belongs in it.
	Description string
}

// ReflectionSession is one conversation given to session_reflection.
type ReflectionSession struct {
	ID    string
	Start time.Time
	// Turns are its messages, oldest first.
	Turns []Turn
}

// ReflectionData is what the session_reflection template sees.
type ReflectionData struct {
	// Sessions is the <sessions> block.
	Sessions string
	// Categories is the <categories> block.
	Categories string
	// SessionCount and MessageCount count what Sessions holds.
	SessionCount, MessageCount int
	// MinConfidence is the confidence below which an insight is dropped.
	MinConfidence float64
	// MaxInsights is the most insights to ask for.
	MaxInsights int
	// Guidance is the application's own instruction on what to keep or
	// leave out (one line; empty for none).
	Guidance string
}

func reflectionData(sessions []ReflectionSession, cats []Category) ReflectionData {
	// Keep the newest messages within MaxReflectionRunes: walk back from
	// the last message of the last session; once one does not fit, it and
	// everything before it is left out. The newest message itself is never
	// left out: alone over the budget, it is cut to fit. Messages without
	// text are not shown (FormatTurns skips them) and cost nothing.
	budget := MaxReflectionRunes
	kept := make([][]Turn, len(sessions)) // per session, the turns shown
	dropped, full, keptAny := 0, false, false
	for i := len(sessions) - 1; i >= 0; i-- {
		var rev []Turn
		for j := len(sessions[i].Turns) - 1; j >= 0; j-- {
			t := sessions[i].Turns[j]
			if strings.TrimSpace(t.Text) == "" {
				continue
			}
			if full {
				dropped++
				continue
			}
			overhead := len(cleanRole(t.Role)) + 2 // "role: "
			n := utf8.RuneCountInString(t.Text) + overhead
			if n > budget {
				full = true
				if keptAny {
					dropped++
					continue
				}
				t.Text = cutText(strings.TrimSpace(t.Text), budget-overhead)
				n = budget
			}
			budget -= n
			keptAny = true
			rev = append(rev, t)
		}
		slices.Reverse(rev)
		kept[i] = rev
	}
	var b strings.Builder
	if dropped > 0 {
		fmt.Fprintf(&b, "[%d earlier messages left out for length]\n\n", dropped)
	}
	// A session left with no message to show is not shown, nor counted.
	shown, msgs := 0, 0
	for i, s := range sessions {
		if len(kept[i]) == 0 {
			continue
		}
		if shown > 0 {
			b.WriteString("\n")
		}
		shown++
		fmt.Fprintf(&b, "=== session %s, %s ===\n", oneLine(s.ID), s.Start.UTC().Format("Monday 2 January 2006"))
		msgs += len(kept[i])
		b.WriteString(FormatTurns(kept[i]))
		b.WriteString("\n")
	}
	var c strings.Builder
	for _, cat := range cats {
		fmt.Fprintf(&c, "%s: %s\n", cat.Name, oneLine(cat.Description))
	}
	return ReflectionData{
		Sessions:      Fence(BlockSessions, b.String()),
		Categories:    Fence(BlockCategories, c.String()),
		SessionCount:  shown,
		MessageCount:  msgs,
		MinConfidence: MinConfidence,
		MaxInsights:   MaxInsights,
	}
}

// SessionReflection renders the session_reflection prompt for one session,
// or several reflected on together, the insight categories to use and the
// application's guidance on what to keep or leave out (developer
// configuration, rendered as an instruction; "" for none). Secrets are
// left out whatever the guidance says. Its answer parses with
// ParseSessionReflection. It fails when no session has a
// message with text or a category is not a lower-case identifier.
func (s *Set) SessionReflection(sessions []ReflectionSession, categories []Category, guidance string) (Rendered, error) {
	n := 0
	for _, ss := range sessions {
		n += countTurns(ss.Turns)
	}
	if n == 0 {
		return Rendered{}, errors.New("prompts: session_reflection: no message with text")
	}
	if len(categories) == 0 {
		return Rendered{}, errors.New("prompts: session_reflection: no insight category")
	}
	for _, c := range categories {
		if !validBlockName(c.Name) {
			return Rendered{}, fmt.Errorf("prompts: session_reflection: category %q is not a lower-case identifier", c.Name)
		}
	}
	d := reflectionData(sessions, categories)
	d.Guidance = oneLine(guidance)
	return s.render(NameSessionReflection, d)
}

// InsightDraft is one insight of a session_reflection answer.
type InsightDraft struct {
	Category   string
	Text       string
	Confidence float64
	Importance string
}

// ReflectionResult is the answer to the session_reflection prompt.
type ReflectionResult struct {
	// Flag is store.FlagInsight when Insights is not empty,
	// store.FlagNoInsight otherwise.
	Flag     string
	Insights []InsightDraft
	// Rejected counts the insights left out: no text, a category not
	// offered, or beyond MaxInsights.
	Rejected int
}

// ParseSessionReflection reads the model's answer to session_reflection.
// The JSON object is found as ParseInteractionMetadata finds it; then each
// insight is checked on its own:
//
//   - the text ("insight_text", or "text", "insight") is cleaned and cut to
//     MaxInsightRunes; an insight without one is rejected;
//   - the category must be one of categories, compared case-insensitively
//     with spaces and hyphens read as '_'; otherwise it is rejected;
//   - confidence is a number or numeric string, clamped to [0, 1]; a
//     percentage above 1 is read as such (85 → 0.85); missing or unreadable
//     means 0.5;
//   - importance is "high", "medium" or "low" in any case; anything else
//     means "medium";
//   - repeated texts (case-insensitive) are rejected, and so is every
//     insight beyond MaxInsights.
//
// The flag follows the insights kept, not the model's word: insights
// without the flag are kept, and a flag without insights is no-insight. It
// fails, wrapping ErrUnusable, when there is no JSON object with
// "insights" or "reflection_flag".
func ParseSessionReflection(out []byte, categories []string) (ReflectionResult, error) {
	obj, err := findObject(out, "insights", "reflection_flag")
	if err != nil {
		return ReflectionResult{}, fmt.Errorf("session reflection: %w", err)
	}
	allowed := make(map[string]string, len(categories))
	for _, c := range categories {
		allowed[normCategory(c)] = c
	}
	var items []json.RawMessage
	if raw, ok := obj["insights"]; ok {
		_ = json.Unmarshal(raw, &items) // a non-list is no insight
	}
	res := ReflectionResult{Flag: store.FlagNoInsight}
	seen := make(map[string]bool)
	for _, raw := range items {
		var it map[string]json.RawMessage
		if json.Unmarshal(raw, &it) != nil || it == nil {
			res.Rejected++
			continue
		}
		it = normKeys(it)
		text := cleanInsight(stringField(it, "insight_text", "text", "insight"))
		cat, ok := allowed[normCategory(stringField(it, "category"))]
		key := strings.ToLower(text)
		if text == "" || !ok || seen[key] || len(res.Insights) == MaxInsights {
			res.Rejected++
			continue
		}
		seen[key] = true
		res.Insights = append(res.Insights, InsightDraft{
			Category:   cat,
			Text:       text,
			Confidence: confidenceField(it["confidence"]),
			Importance: importanceField(stringField(it, "importance")),
		})
	}
	if len(res.Insights) > 0 {
		res.Flag = store.FlagInsight
	}
	return res, nil
}

func normCategory(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return '_'
		}
		return r
	}, strings.ToLower(strings.TrimSpace(s)))
}

// cleanInsight collapses whitespace, drops quotes wrapped around the whole
// text and cuts it to MaxInsightRunes at a word boundary.
func cleanInsight(s string) string {
	return cutText(trimWrapQuotes(CleanText(s)), MaxInsightRunes)
}

// cutText cuts s to at most max runes, at a word boundary when one is
// near, marking the cut with "…".
func cutText(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	if max < 1 {
		return ""
	}
	cut := string([]rune(s)[:max-1])
	if sp := strings.LastIndexByte(cut, ' '); sp > len(cut)*4/5 {
		cut = cut[:sp]
	}
	return strings.TrimRight(cut, " ,;:") + "…"
}

// trimWrapQuotes trims spaces and the quotes or backticks that wrap the
// whole of s ("\"The user is 42.\"", "`x`"), repeatedly. A quote at one
// end only is part of the text ("The user said: \"I'm 42.\""), and so is
// a pair of double quotes with another double quote between them
// ("\"Hi,\" she said, \"bye\"").
func trimWrapQuotes(s string) string {
	const doubles = "\"“”"
	for {
		s = strings.TrimSpace(s)
		first, n := utf8.DecodeRuneInString(s)
		last, m := utf8.DecodeLastRuneInString(s)
		if s == "" || !strings.ContainsRune(quoteRunes, first) || !strings.ContainsRune(quoteRunes, last) {
			return s
		}
		if len(s) < n+m { // a lone quote
			return ""
		}
		inner := s[n : len(s)-m]
		if strings.ContainsRune(doubles, first) && strings.ContainsAny(inner, doubles) {
			return s
		}
		s = inner
	}
}

// quoteRunes are the quotes trimWrapQuotes drops.
const quoteRunes = "\"'“”‘’`"

// confidenceField reads a confidence: a number or a numeric string, a
// percentage when above 1, clamped to [0, 1]; 0.5 when missing (null
// included) or unreadable (NaN and infinities included).
func confidenceField(raw json.RawMessage) float64 {
	var f float64
	if len(raw) == 0 || string(raw) == "null" {
		return 0.5
	}
	if json.Unmarshal(raw, &f) != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return 0.5
		}
		s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0.5
		}
		f = v
	}
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return 0.5
	case f > 1 && f <= 100:
		f /= 100
	}
	return max(0, min(1, f))
}

func importanceField(s string) string {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case "high", "medium", "low":
		return v
	}
	return "medium"
}

// InsightLine is one insight shown to profile_synthesis or reconcile.
type InsightLine struct {
	// Label identifies the insight in the prompt and in the answer
	// ("i1", "i2"…): short, and never the stored id, which the model has
	// no need to see.
	Label      string
	Date       time.Time
	Category   string
	Confidence float64
	Text       string
}

func formatInsightLines(lines []InsightLine) string {
	var b strings.Builder
	for _, l := range lines {
		cat := l.Category
		if cat == "" {
			cat = "-"
		}
		fmt.Fprintf(&b, "[%s | %s | %s | %.2f] %s\n", l.Label, l.Date.UTC().Format("2006-01-02"), oneLine(cat), l.Confidence, oneLine(l.Text))
	}
	return b.String()
}

// ProfileData is what the profile_synthesis template sees.
type ProfileData struct {
	// Profile is the <profile> block (possibly empty).
	Profile string
	// NewInsights is the <new_insights> block.
	NewInsights  string
	InsightCount int
	// MaxWords is the profile length to ask for.
	MaxWords int
}

func profileData(profile string, insights []InsightLine) ProfileData {
	return ProfileData{
		Profile:      Fence(BlockProfile, profile),
		NewInsights:  Fence(BlockNewInsights, formatInsightLines(insights)),
		InsightCount: len(insights),
		MaxWords:     ProfileWords,
	}
}

// ProfileSynthesis renders the profile_synthesis prompt: the current
// long-term profile (empty for a first one) and the session insights to
// fold into it. Its answer parses with ParseProfile. It fails when there
// is no insight.
func (s *Set) ProfileSynthesis(profile string, insights []InsightLine) (Rendered, error) {
	if len(insights) == 0 {
		return Rendered{}, errors.New("prompts: profile_synthesis: no insight to fold in")
	}
	return s.render(NameProfileSynthesis, profileData(profile, insights))
}

// ParseProfile reads the answer to profile_synthesis: plain text, cleaned
// like ParseCumulativeSummary (which also forgives a JSON object with a
// "profile" or "summary" string) and cut to MaxProfileRunes. It fails,
// wrapping ErrUnusable, when no text is left.
func ParseProfile(out []byte) (string, error) {
	if len(out) > MaxOutputBytes {
		return "", fmt.Errorf("profile: %w: output of %d bytes exceeds %d", ErrUnusable, len(out), MaxOutputBytes)
	}
	text := strings.TrimSpace(stripFence(strings.ToValidUTF8(string(stripReasoning(out)), "\uFFFD")))
	if strings.HasPrefix(text, "{") {
		if obj, err := findObject([]byte(text), "profile", "summary"); err == nil {
			if s := stringField(obj, "profile", "summary"); s != "" {
				text = s
			}
		}
	}
	text = cutText(trimWrapQuotes(stripLabel(CleanText(text))), MaxProfileRunes)
	if text == "" {
		return "", fmt.Errorf("profile: %w: empty text", ErrUnusable)
	}
	return text, nil
}

// ReconcileData is what the reconcile template sees.
type ReconcileData struct {
	// Insights is the <insights> block.
	Insights     string
	InsightCount int
}

func reconcileData(insights []InsightLine) ReconcileData {
	return ReconcileData{Insights: Fence(BlockInsights, formatInsightLines(insights)), InsightCount: len(insights)}
}

// Reconcile renders the reconcile prompt for a pool of insights. Its
// answer parses with ParseReconcile. It fails with fewer than two insights
// or a repeated or empty label.
func (s *Set) Reconcile(insights []InsightLine) (Rendered, error) {
	if len(insights) < 2 {
		return Rendered{}, errors.New("prompts: reconcile: fewer than two insights")
	}
	seen := make(map[string]bool, len(insights))
	for _, l := range insights {
		if l.Label == "" || seen[l.Label] || strings.ContainsAny(l.Label, "|[] \n") {
			return Rendered{}, fmt.Errorf("prompts: reconcile: label %q is empty, repeated or has a separator", l.Label)
		}
		seen[l.Label] = true
	}
	return s.render(NameReconcile, reconcileData(insights))
}

// DuplicateGroup is a set of insights that say the same thing.
type DuplicateGroup struct {
	Labels []string
	// Merged is the merged text; empty when the model gave none.
	Merged string
}

// ReconcileResult is the answer to the reconcile prompt.
type ReconcileResult struct {
	Duplicates     []DuplicateGroup
	Contradictions [][]string
	// Rejected counts groups left out: fewer than two known labels once
	// unknown and already grouped ones are dropped.
	Rejected int
}

// ParseReconcile reads the answer to reconcile. Labels are matched against
// labels (the ones the prompt showed), case-insensitively and with
// surrounding brackets and spaces dropped; unknown labels are dropped, a
// label repeated within a group counts once, and a label already in a
// group (duplicates first, then contradictions) is dropped from any later
// group; a group left with fewer than two labels is rejected. "ids" may
// also be "labels" or "insights". Merged texts are cleaned and cut like
// insight texts. It fails, wrapping ErrUnusable, when
// there is no JSON object with "duplicates" or "contradictions".
func ParseReconcile(out []byte, labels []string) (ReconcileResult, error) {
	obj, err := findObject(out, "duplicates", "contradictions")
	if err != nil {
		return ReconcileResult{}, fmt.Errorf("reconcile: %w", err)
	}
	known := make(map[string]string, len(labels))
	for _, l := range labels {
		known[strings.ToLower(l)] = l
	}
	used := make(map[string]bool)
	group := func(raw json.RawMessage) (ids []string, merged string, ok bool) {
		var it map[string]json.RawMessage
		if json.Unmarshal(raw, &it) != nil || it == nil {
			var list []string // a bare list of ids
			if json.Unmarshal(raw, &list) != nil {
				return nil, "", false
			}
			it = map[string]json.RawMessage{"ids": raw}
		}
		it = normKeys(it)
		for _, id := range listField(it, "ids", "labels", "insights") {
			l, found := known[strings.ToLower(strings.Trim(id, "[] \t"))]
			if !found || used[l] || slices.Contains(ids, l) {
				continue
			}
			ids = append(ids, l)
		}
		if len(ids) < 2 {
			return nil, "", false
		}
		for _, l := range ids {
			used[l] = true
		}
		return ids, cleanInsight(stringField(it, "merged_text", "merged", "text")), true
	}
	var res ReconcileResult
	var dups, cons []json.RawMessage
	if raw, ok := obj["duplicates"]; ok {
		_ = json.Unmarshal(raw, &dups)
	}
	if raw, ok := obj["contradictions"]; ok {
		_ = json.Unmarshal(raw, &cons)
	}
	for _, raw := range dups {
		if ids, merged, ok := group(raw); ok {
			res.Duplicates = append(res.Duplicates, DuplicateGroup{Labels: ids, Merged: merged})
		} else {
			res.Rejected++
		}
	}
	for _, raw := range cons {
		if ids, _, ok := group(raw); ok {
			res.Contradictions = append(res.Contradictions, ids)
		} else {
			res.Rejected++
		}
	}
	return res, nil
}

// SessionReflection renders the session_reflection prompt of the default
// set.
func SessionReflection(sessions []ReflectionSession, categories []Category, guidance string) (Rendered, error) {
	return Default().SessionReflection(sessions, categories, guidance)
}

// ProfileSynthesis renders the profile_synthesis prompt of the default set.
func ProfileSynthesis(profile string, insights []InsightLine) (Rendered, error) {
	return Default().ProfileSynthesis(profile, insights)
}

// Reconcile renders the reconcile prompt of the default set.
func Reconcile(insights []InsightLine) (Rendered, error) {
	return Default().Reconcile(insights)
}

// oneLine collapses s to one line of single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
