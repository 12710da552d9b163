package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentmemory/agentmemory/internal/locomocorpus"
)

// dateLayout is LoCoMo's session date format: "4:04 pm on 20 January, 2023".
const dateLayout = "3:04 pm on 2 January, 2006"

// conversation is one LoCoMo file: the conversation fields only. The
// dataset authors' annotations (observations, session and event summaries)
// are never read, so nothing of them can reach the memory.
type conversation struct {
	name     string // file name without .json
	speakerA string
	speakerB string
	sessions []session
	qa       []question
}

type session struct {
	n     int
	time  time.Time
	turns []turn
}

type turn struct {
	Speaker     string `json:"speaker"`
	DiaID       string `json:"dia_id"`
	Text        string `json:"text"`
	BlipCaption string `json:"blip_caption"`
}

type question struct {
	Question string   `json:"question"`
	Evidence []string `json:"evidence"`
	// Answer is the reference answer: a string, or a number in some of the
	// released data (answerText reads both).
	Answer json.RawMessage `json:"answer"`
	// unknown are evidence ids that name no turn of the conversation, left
	// out of Evidence.
	unknown  []string
	Category int `json:"category"`
}

// loadDir reads every *.json file of dir as a LoCoMo conversation, in file
// name order.
func loadDir(dir string) ([]*conversation, error) {
	files, err := locomocorpus.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []*conversation
	for _, f := range files {
		c, err := loadFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func loadFile(f locomocorpus.File) (*conversation, error) {
	path, fields := f.Path, f.Conversation
	var err error
	c := &conversation{name: strings.TrimSuffix(filepath.Base(path), ".json")}
	str := func(key string) (string, error) {
		var s string
		v, ok := fields[key]
		if !ok {
			return "", fmt.Errorf("%s: no %q", path, key)
		}
		if err := json.Unmarshal(v, &s); err != nil {
			return "", fmt.Errorf("%s: %s: %w", path, key, err)
		}
		return s, nil
	}
	if c.speakerA, err = str("speaker_a"); err != nil {
		return nil, err
	}
	if c.speakerB, err = str("speaker_b"); err != nil {
		return nil, err
	}
	for _, sk := range f.Sessions() {
		key := sk.Key
		s := session{n: sk.N}
		if err := json.Unmarshal(fields[key], &s.turns); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, key, err)
		}
		date, err := str(key + "_date_time")
		if err != nil {
			return nil, err
		}
		if s.time, err = time.Parse(dateLayout, strings.ToLower(strings.TrimSpace(date))); err != nil {
			return nil, fmt.Errorf("%s: %s_date_time: %w", path, key, err)
		}
		for i, t := range s.turns {
			if t.DiaID == "" || t.Speaker == "" {
				return nil, fmt.Errorf("%s: %s turn %d: missing speaker or dia_id", path, key, i)
			}
		}
		c.sessions = append(c.sessions, s)
	}
	if len(c.sessions) == 0 {
		return nil, fmt.Errorf("%s: no session_N", path)
	}
	qa, ok := f.Fields["qa"]
	if !ok {
		return nil, fmt.Errorf("%s: no \"qa\"", path)
	}
	if err := json.Unmarshal(qa, &c.qa); err != nil {
		return nil, fmt.Errorf("%s: qa: %w", path, err)
	}
	turns := map[string]bool{}
	for _, s := range c.sessions {
		for _, t := range s.turns {
			turns[t.DiaID] = true
		}
	}
	for i := range c.qa {
		q := &c.qa[i]
		q.Evidence, q.unknown = checkEvidence(splitEvidence(q.Evidence), turns)
	}
	return c, nil
}

// checkEvidence keeps the ids of ev that name a turn of the conversation,
// repairing a stray colon ("D:11:26" for "D11:26", a slip in the released
// data), and returns the others apart: a question cannot be scored on a
// turn that does not exist ("D", or "D10:19" in a session of 18 turns).
func checkEvidence(ev []string, turns map[string]bool) (known, unknown []string) {
	for _, e := range ev {
		switch fixed := strings.Replace(e, "D:", "D", 1); {
		case turns[e]:
			known = append(known, e)
		case turns[fixed]:
			known = append(known, fixed)
		default:
			unknown = append(unknown, e)
		}
	}
	return known, unknown
}

// splitEvidence splits entries that hold several ids ("D8:6; D9:17", a slip
// in the released data) and trims blanks.
func splitEvidence(ev []string) []string {
	var out []string
	for _, e := range ev {
		for _, part := range strings.FieldsFunc(e, func(r rune) bool { return r == ';' || r == ',' || r == ' ' }) {
			out = append(out, part)
		}
	}
	return out
}

// answerText is the reference answer as text, or "" when there is none.
func (q question) answerText() string {
	var s string
	if json.Unmarshal(q.Answer, &s) == nil {
		return strings.TrimSpace(s)
	}
	var n json.Number
	if json.Unmarshal(q.Answer, &n) == nil {
		return n.String()
	}
	return ""
}

// messageText is what memory stores of a turn: its text, with the image's
// caption kept as text.
func messageText(t turn) string {
	text := strings.TrimSpace(t.Text)
	if c := strings.TrimSpace(t.BlipCaption); c != "" {
		if text != "" {
			text += " "
		}
		text += "[image: " + c + "]"
	}
	return text
}
