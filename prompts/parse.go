package prompts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrUnusable reports model output from which a parser could take nothing
// usable: no JSON object, or an object without any expected field.
var ErrUnusable = errors.New("prompts: unusable model output")

// MaxOutputBytes bounds the model output a parser reads; longer output is
// refused whole.
const MaxOutputBytes = 1 << 20

// maxObjectTries bounds how many '{' a parser tries to decode from, so that
// hostile output costs linear time.
const maxObjectTries = 16

// Metadata is the answer to the interaction_metadata prompt.
type Metadata struct {
	Summary         string   `json:"summary"`
	MentionedTopics []string `json:"mentioned_topics"`
	Entities        []string `json:"entities"`
}

// SessionSummaryResult is the answer to the session_summary prompt.
type SessionSummaryResult struct {
	Summary   string   `json:"summary"`
	KeyTopics []string `json:"key_topics"`
}

// ParseInteractionMetadata reads the model's answer to the
// interaction_metadata prompt. It is lenient about the wrapping and strict
// about the content:
//
//   - the first decodable JSON object is used, wherever it sits: inside a
//     ```json code fence, after a sentence of prose, or wrapped once in an
//     object with a single field ({"metadata": {...}});
//   - keys match case-insensitively, and "topics" or "key_topics" stand for
//     "mentioned_topics";
//   - a field of the wrong type is ignored; a missing field is empty; a
//     list given as one string is split at commas and semicolons; numbers
//     in a list become their text;
//   - items are trimmed and whitespace-collapsed; empty, over-long (more
//     than MaxItemRunes) and case-insensitively repeated items are dropped;
//     lists are cut to MaxTopics and MaxEntities, the summary to
//     MaxSummaryRunes.
//
// It fails, wrapping ErrUnusable, when there is no JSON object or nothing
// usable in it (no summary, no topic, no entity). The object is found with
// FindObject, which also repairs trailing commas and comments and skips
// <think> blocks.
func ParseInteractionMetadata(out []byte) (Metadata, error) {
	obj, err := findObject(out, "summary", "mentioned_topics", "topics", "key_topics", "entities")
	if err != nil {
		return Metadata{}, fmt.Errorf("interaction metadata: %w", err)
	}
	m := Metadata{
		Summary:         cleanSummary(stringField(obj, "summary")),
		MentionedTopics: cleanList(listField(obj, "mentioned_topics", "topics", "key_topics"), MaxTopics),
		Entities:        cleanList(listField(obj, "entities", "named_entities"), MaxEntities),
	}
	if m.Summary == "" && len(m.MentionedTopics) == 0 && len(m.Entities) == 0 {
		return Metadata{}, fmt.Errorf("interaction metadata: %w: no summary, topic or entity in the JSON object", ErrUnusable)
	}
	return m, nil
}

// ParseSessionSummary reads the model's answer to the session_summary
// prompt, as leniently as ParseInteractionMetadata ("topics" and
// "mentioned_topics" stand for "key_topics"). It fails, wrapping
// ErrUnusable, when there is no JSON object or it has no summary: a session
// record without a summary is no record.
func ParseSessionSummary(out []byte) (SessionSummaryResult, error) {
	obj, err := findObject(out, "summary", "key_topics", "topics", "mentioned_topics")
	if err != nil {
		return SessionSummaryResult{}, fmt.Errorf("session summary: %w", err)
	}
	r := SessionSummaryResult{
		Summary:   cleanSummary(stringField(obj, "summary")),
		KeyTopics: cleanList(listField(obj, "key_topics", "topics", "mentioned_topics"), MaxTopics),
	}
	if r.Summary == "" {
		return SessionSummaryResult{}, fmt.Errorf("session summary: %w: no summary in the JSON object", ErrUnusable)
	}
	return r, nil
}

// ParseCumulativeSummary reads the model's answer to the cumulative_summary
// prompt: plain text. It drops <think> blocks, a surrounding code fence, a leading label
// such as "Updated summary:", surrounding quotes and control characters,
// collapses whitespace and cuts the text to MaxSummaryRunes. A model that
// answered a JSON object with a "summary" string anyway is forgiven. It
// fails, wrapping ErrUnusable, when no text is left.
func ParseCumulativeSummary(out []byte) (string, error) {
	if len(out) > MaxOutputBytes {
		return "", fmt.Errorf("cumulative summary: %w: output of %d bytes exceeds %d", ErrUnusable, len(out), MaxOutputBytes)
	}
	text := strings.TrimSpace(stripFence(strings.ToValidUTF8(string(stripReasoning(out)), "\uFFFD")))
	if strings.HasPrefix(text, "{") {
		if obj, err := findObject([]byte(text), "summary"); err == nil {
			if s := stringField(obj, "summary"); s != "" {
				text = s
			}
		}
	}
	text = stripLabel(CleanText(text))
	text = cleanSummary(strings.Trim(text, "\"'“”‘’` "))
	if text == "" {
		return "", fmt.Errorf("cumulative summary: %w: empty text", ErrUnusable)
	}
	return text, nil
}

// findObject is FindObject, for the parsers of this package.
func findObject(out []byte, wanted ...string) (map[string]json.RawMessage, error) {
	return FindObject(out, wanted...)
}

// FindObject is the lenient JSON extractor every parser of this package
// reads model output with. It returns the first JSON object in out that
// has one of the wanted keys (compared after lower-casing keys and reading
// spaces and hyphens as '_'), descending once into the lone field of an
// object that has none of them ({"metadata": {...}}). The object may sit
// anywhere: inside a ```json code fence, after a sentence of prose, after
// a model's <think>…</think> reasoning (which is skipped, so a draft in it
// is never taken for the answer). An object that is not valid JSON only
// because of trailing commas or // and /* */ comments is repaired;
// anything else invalid is skipped. At most 16 opening braces are tried,
// so hostile output costs linear time. Keys of the returned object are
// normalised as above.
//
// It fails, wrapping ErrUnusable, when out exceeds MaxOutputBytes or holds
// no such object. A model without JSON mode (an OpenAI-compatible server
// that refuses response_format) answers in these shapes.
func FindObject(out []byte, wanted ...string) (map[string]json.RawMessage, error) {
	if len(out) > MaxOutputBytes {
		return nil, fmt.Errorf("%w: output of %d bytes exceeds %d", ErrUnusable, len(out), MaxOutputBytes)
	}
	rest, found := stripReasoning(out), false
	for try := 0; try < maxObjectTries; try++ {
		i := bytes.IndexByte(rest, '{')
		if i < 0 {
			break
		}
		rest = rest[i:]
		if obj, ok := decodeObject(rest); ok {
			obj = normKeys(obj)
			if !hasAny(obj, wanted) && len(obj) == 1 {
				for _, v := range obj {
					var inner map[string]json.RawMessage
					if json.Unmarshal(v, &inner) == nil && inner != nil {
						obj = normKeys(inner)
					}
				}
			}
			if hasAny(obj, wanted) {
				return obj, nil
			}
			found = true
		}
		rest = rest[1:]
	}
	if found {
		return nil, fmt.Errorf("%w: no JSON object with any of the fields %s", ErrUnusable, strings.Join(wanted, ", "))
	}
	return nil, fmt.Errorf("%w: no JSON object found", ErrUnusable)
}

// decodeObject decodes the JSON object at the start of b (b[0] is '{'),
// repairing trailing commas and comments when it does not decode as it
// is.
func decodeObject(b []byte) (map[string]json.RawMessage, bool) {
	decode := func(b []byte) (map[string]json.RawMessage, bool) {
		var obj map[string]json.RawMessage
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&obj); err != nil || obj == nil {
			return nil, false
		}
		return obj, true
	}
	if obj, ok := decode(b); ok {
		return obj, true
	}
	if fixed, ok := repairObject(b); ok {
		return decode(fixed)
	}
	return nil, false
}

// repairObject returns the object that starts b (b[0] is '{') up to its
// matching '}', outside strings without // and /* */ comments and without
// a comma before a closing brace or bracket. ok is false when the object
// does not close.
func repairObject(b []byte) (fixed []byte, ok bool) {
	out := make([]byte, 0, len(b))
	depth := 0
	inString, escaped := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '/':
			if i+1 < len(b) && b[i+1] == '/' {
				nl := bytes.IndexByte(b[i:], '\n')
				if nl < 0 {
					return nil, false
				}
				i += nl - 1 // the newline is kept
				continue
			}
			if i+1 < len(b) && b[i+1] == '*' {
				end := bytes.Index(b[i+2:], []byte("*/"))
				if end < 0 {
					return nil, false
				}
				i += 2 + end + 1
				continue
			}
		case '{', '[':
			depth++
		case '}', ']':
			out = bytes.TrimRight(out, " \t\r\n")
			out = bytes.TrimSuffix(out, []byte(","))
			depth--
			if depth == 0 {
				return append(out, c), true
			}
		}
		out = append(out, c)
	}
	return nil, false
}

// stripReasoning removes the <think>…</think> (or <thinking>…</thinking>)
// blocks reasoning models served without a reasoning parser put before
// their answer. An unclosed block is left as it is.
func stripReasoning(out []byte) []byte {
	lower := bytes.ToLower(out)
	if !bytes.Contains(lower, []byte("<think")) {
		return out
	}
	var b []byte
	for _, tag := range []string{"think", "thinking"} {
		open, end := []byte("<"+tag+">"), []byte("</"+tag+">")
		for {
			i := bytes.Index(lower, open)
			if i < 0 {
				break
			}
			j := bytes.Index(lower[i:], end)
			if j < 0 {
				break
			}
			j += i + len(end)
			if b == nil {
				b = bytes.Clone(out)
			}
			b = append(b[:i], b[j:]...)
			lower = append(lower[:i], lower[j:]...)
		}
	}
	if b == nil {
		return out
	}
	return b
}

// normKeys lower-cases keys and turns spaces and hyphens into '_'; the
// first of colliding keys, in sorted order, wins.
func normKeys(obj map[string]json.RawMessage) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(obj))
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		n := strings.Map(func(r rune) rune {
			if r == ' ' || r == '-' {
				return '_'
			}
			return unicode.ToLower(r)
		}, strings.TrimSpace(k))
		if _, dup := out[n]; !dup {
			out[n] = obj[k]
		}
	}
	return out
}

func hasAny(obj map[string]json.RawMessage, keys []string) bool {
	for _, k := range keys {
		if _, ok := obj[k]; ok {
			return true
		}
	}
	return false
}

// stringField returns the first of keys that holds a JSON string.
func stringField(obj map[string]json.RawMessage, keys ...string) string {
	for _, k := range keys {
		var s string
		if raw, ok := obj[k]; ok && json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return ""
}

// listField returns the items of the first of keys that holds a list (or a
// string, split at commas and semicolons).
func listField(obj map[string]json.RawMessage, keys ...string) []string {
	for _, k := range keys {
		raw, ok := obj[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' || r == '\n' })
		}
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			continue
		}
		var out []string
		for _, it := range items {
			var s string
			if json.Unmarshal(it, &s) == nil {
				out = append(out, s)
				continue
			}
			dec := json.NewDecoder(bytes.NewReader(it))
			dec.UseNumber()
			var n json.Number
			if dec.Decode(&n) == nil {
				out = append(out, n.String())
			}
		}
		return out
	}
	return nil
}

// cleanList cleans items, drops empty, over-long and repeated ones and
// keeps at most max.
func cleanList(items []string, max int) []string {
	out := []string{}
	seen := make(map[string]bool)
	for _, it := range items {
		it = trimItem(CleanText(it))
		if it == "" || utf8.RuneCountInString(it) > MaxItemRunes || !hasWordRune(it) {
			continue
		}
		key := strings.ToLower(it)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, it)
		if len(out) == max {
			break
		}
	}
	return out
}

// trimItem drops list markers, quotes and separators around an item.
func trimItem(it string) string {
	for {
		prev := it
		it = strings.TrimPrefix(it, "- ")
		it = strings.TrimLeft(it, itemLeftCut)
		if it == prev {
			break
		}
	}
	return strings.TrimRight(it, itemRightCut)
}

const (
	itemLeftCut  = "*•#>\"'“”‘’`,;: "
	itemRightCut = "\"'“”‘’`,;: "
)

func hasWordRune(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}

// cleanSummary collapses whitespace, drops control characters and cuts the
// text to MaxSummaryRunes at a word boundary.
func cleanSummary(s string) string {
	s = CleanText(s)
	if utf8.RuneCountInString(s) <= MaxSummaryRunes {
		return s
	}
	r := []rune(s)[:MaxSummaryRunes-1]
	cut := string(r)
	if sp := strings.LastIndexByte(cut, ' '); sp > len(cut)*4/5 {
		cut = cut[:sp]
	}
	return strings.TrimRight(cut, " ,;:") + "…"
}

// CleanText is s as the parsers clean a text: valid UTF-8, without control
// and format characters other than whitespace, each whitespace run
// collapsed to one space.
func CleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return ' '
		}
		if unicode.IsControl(r) || r == '\uFEFF' {
			return -1
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// stripFence removes a markdown code fence around text, if any.
func stripFence(text string) string {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "```") {
		return text
	}
	t = t[3:]
	if nl := strings.IndexByte(t, '\n'); nl >= 0 {
		t = t[nl+1:] // drop the info string ("json", "text"…)
	} else {
		t = strings.TrimLeft(t, "abcdefghijklmnopqrstuvwxyz")
	}
	t = strings.TrimSpace(t)
	t = strings.TrimSuffix(t, "```")
	return t
}

// stripLabel removes a leading "Summary:"-like label: up to four words
// ending in a colon, one of them "summary".
func stripLabel(text string) string {
	head, rest, ok := strings.Cut(text, ":")
	if !ok || len(head) > 40 {
		return text
	}
	words := strings.Fields(strings.ToLower(strings.Trim(head, "*#_ ")))
	if len(words) == 0 || len(words) > 4 {
		return text
	}
	for _, w := range words {
		if w := strings.Trim(w, "*_"); w == "summary" || w == "profile" {
			return strings.TrimLeft(rest, "*_ ")
		}
	}
	return text
}
