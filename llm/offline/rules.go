package offline

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/lexis"
	"github.com/agentmemory/agentmemory/prompts"
	"github.com/google/jsonschema-go/jsonschema"
)

// Leads of composed answers.
const (
	leadMemory = "From memory: "
	leadTools  = "Tool results: "
	noResults  = "nothing relevant was found."
	ackNoTopic = "Noted."
	ackPrefix  = "I have nothing in memory about \""
)

// ownAnswer reports whether text is one of this client's composed answers,
// recognised by its lead. The memory handlers leave such answers out: a
// summary of the client's own rule-made echoes would only echo again.
func ownAnswer(text string) bool {
	for _, lead := range []string{leadMemory, leadTools, ackPrefix} {
		if strings.HasPrefix(text, lead) {
			return true
		}
	}
	return text == ackNoTopic
}

// maxTopicWords bounds the topic echoed by the acknowledgement.
const maxTopicWords = 6

// answerToolResults composes the trailing tool messages of msgs.
func (c *Client) answerToolResults(msgs []agent.Message) string {
	start := len(msgs)
	for start > 0 && msgs[start-1].Role == agent.RoleTool {
		start--
	}
	lead := leadTools
	question := ""
	for i := start - 1; i >= 0; i-- {
		if msgs[i].Role == agent.RoleUser {
			question = msgs[i].Text
			break
		}
	}
	var parts []string
	for _, m := range msgs[start:] {
		if slices.Contains(c.auto, c.toolName(msgs[:start], m)) {
			lead = leadMemory
		}
		if block, ok := prompts.Blocks(m.Text)[prompts.BlockMemories]; ok {
			parts = append(parts, c.relevantLines(question, block)...)
			continue
		}
		if t := collapse(m.Text); t != "" {
			parts = append(parts, t)
		}
	}
	body := strings.Join(parts, " ")
	if body == "" {
		body = noResults
	}
	return truncateRunes(lead+body, c.maxRunes)
}

// relevantLines answers a question from a <memories> block, one memory
// or fact per line behind its bracketed citation: for each line, its
// sentence sharing the most words with the question, followed by the
// citation; the best MaxSentences lines, in their original order.
func (c *Client) relevantLines(question, block string) []string {
	type cand struct {
		text  string
		score int
	}
	var cands []cand
	for _, l := range strings.Split(block, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- "))
		cite, text := "", l
		if strings.HasPrefix(l, "[") {
			if i := strings.Index(l, "] "); i > 0 {
				cite, text = l[:i+1], l[i+2:]
			}
		}
		var sents []string
		for _, part := range strings.Split(text, " / ") {
			sents = append(sents, lexis.Sentences(part)...)
		}
		best := lexis.Rank(question, sents, 1)
		if len(best) == 0 {
			continue
		}
		answer := collapse(sents[best[0].Index])
		if cite != "" {
			answer += " " + cite
		}
		cands = append(cands, cand{answer, best[0].Score})
	}
	texts := make([]string, len(cands))
	for i, cd := range cands {
		texts[i] = cd.text
	}
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case cands[a].score > cands[b].score:
			return -1
		case cands[a].score < cands[b].score:
			return 1
		}
		return 0
	})
	if len(order) > c.maxSentences {
		order = order[:c.maxSentences]
	}
	slices.Sort(order)
	out := make([]string, len(order))
	for i, j := range order {
		out[i] = texts[j]
	}
	return out
}

// toolName returns the name of the tool a tool message answers: its Name,
// or the name of the call with its ToolCallID in an earlier assistant
// message.
func (c *Client) toolName(before []agent.Message, m agent.Message) string {
	if m.Name != "" {
		return m.Name
	}
	for i := len(before) - 1; i >= 0; i-- {
		for _, tc := range before[i].ToolCalls {
			if tc.ID == m.ToolCallID {
				return tc.Name
			}
		}
	}
	return ""
}

// toolCalls returns the calls rule 3 makes for the user's text.
func (c *Client) toolCalls(req *agent.ChatRequest, text string) []agent.ToolCall {
	words := lexis.Words(text)
	memory := needsMemory(text, words)
	var (
		calls  []agent.ToolCall
		called []string
	)
	for _, t := range req.Tools {
		if t == nil {
			continue
		}
		name := t.Name()
		if name == "" || slices.Contains(called, name) {
			continue
		}
		named := containsRun(words, lexis.Words(name))
		auto := memory && slices.Contains(c.auto, name)
		if !named && !auto {
			continue
		}
		args, ok := fillArgs(t.Schema(), text)
		if !ok {
			continue
		}
		called = append(called, name)
		calls = append(calls, agent.ToolCall{ID: callID(req, len(calls), name), Name: name, Arguments: args})
	}
	return calls
}

// containsRun reports whether needle occurs in hay as consecutive words.
func containsRun(hay, needle []string) bool {
	if len(needle) == 0 || len(needle) > len(hay) {
		return false
	}
	for i := 0; i+len(needle) <= len(hay); i++ {
		if slices.Equal(hay[i:i+len(needle)], needle) {
			return true
		}
	}
	return false
}

// needsMemory is the "needs memory" check of rule 3: a question, or a
// reference to the user or to the past. words are text's normalised words.
func needsMemory(text string, words []string) bool {
	if strings.ContainsAny(text, "?？") {
		return true
	}
	if len(words) > 0 {
		switch words[0] {
		case "what", "whats", "when", "where", "who", "whom", "whose", "why", "how", "which",
			"do", "does", "did", "can", "could", "should", "would", "will", "is", "are",
			"was", "were", "have", "has", "had", "tell", "remind":
			return true
		}
	}
	for i, w := range words {
		switch w {
		case "i", "im", "ive", "me", "my", "mine", "myself", "we", "weve", "our", "ours", "us",
			"remember", "recall", "remind", "previously", "earlier":
			return true
		case "last":
			if i+1 < len(words) && (words[i+1] == "time" || words[i+1] == "session") {
				return true
			}
		}
	}
	return false
}

// fillArgs builds the arguments object for a tool from its schema: required
// string properties get text (or their first enum value), other required
// properties their default. ok is false when a required property cannot be
// filled.
func fillArgs(s *jsonschema.Schema, text string) (args json.RawMessage, ok bool) {
	obj := map[string]any{}
	if s != nil {
		for _, name := range s.Required {
			p := s.Properties[name]
			if p == nil {
				return nil, false
			}
			v, ok := fillValue(p, text)
			if !ok {
				return nil, false
			}
			obj[name] = v
		}
	}
	b, err := json.Marshal(obj) // sorted keys: deterministic
	if err != nil {
		return nil, false
	}
	return b, true
}

func fillValue(p *jsonschema.Schema, text string) (any, bool) {
	if len(p.Enum) > 0 {
		if s, ok := p.Enum[0].(string); ok && allowsString(p) {
			return s, true
		}
	}
	if p.Const != nil {
		return *p.Const, true
	}
	if allowsString(p) {
		return truncateRunes(collapse(text), maxArgRunes), true
	}
	if len(p.Default) > 0 && json.Valid(p.Default) {
		return json.RawMessage(p.Default), true
	}
	return nil, false
}

func allowsString(p *jsonschema.Schema) bool {
	return p.Type == "string" || slices.Contains(p.Types, "string")
}

// answer composes the extractive answer of rule 4.
func (c *Client) answer(msgs []agent.Message) string {
	qi := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == agent.RoleUser {
			qi = i
			break
		}
	}
	if qi < 0 {
		return ackNoTopic
	}
	question := msgs[qi].Text

	var sentences []string
	for i, m := range msgs {
		// Memory is the system messages and what a provider injected of the
		// user's own words; injected assistant turns are this client's
		// earlier answers, and quoting them would echo itself.
		if i == qi || (m.Role != agent.RoleSystem && (m.Source == "" || m.Role != agent.RoleUser)) {
			continue
		}
		for _, s := range lexis.Sentences(m.Text) {
			if !slices.Contains(sentences, s) {
				sentences = append(sentences, s)
			}
		}
	}
	ranked := lexis.Rank(question, sentences, c.maxSentences)
	if len(ranked) == 0 {
		return c.acknowledge(question)
	}
	idx := make([]int, len(ranked))
	for i, r := range ranked {
		idx[i] = r.Index
	}
	slices.Sort(idx)
	parts := make([]string, len(idx))
	for i, j := range idx {
		parts[i] = collapse(sentences[j])
	}
	return truncateRunes(leadMemory+strings.Join(parts, " "), c.maxRunes)
}

// acknowledge is the answer when no memory matches: it echoes the
// question's content words.
func (c *Client) acknowledge(question string) string {
	var topic []string
	for _, w := range lexis.Words(question) {
		if lexis.IsStopword(w) || isSocial(w) || slices.Contains(topic, w) {
			continue
		}
		topic = append(topic, w)
		if len(topic) == maxTopicWords {
			break
		}
	}
	if len(topic) == 0 {
		return ackNoTopic
	}
	return truncateRunes(ackPrefix+strings.Join(topic, " ")+`".`, c.maxRunes)
}

// isSocial reports greetings, thanks and other words that carry no topic.
func isSocial(w string) bool {
	switch w {
	case "hi", "hello", "hey", "thanks", "thank", "thx", "bye", "goodbye", "ok", "okay",
		"yes", "yeah", "sure", "great", "cool", "good", "morning", "afternoon", "evening", "night":
		return true
	}
	return false
}

// collapse trims s and replaces each run of whitespace with one space.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

func countWords(s string) int { return lexis.CountWords(s) }

// cutWords cuts s after its n-th word and reports whether it cut anything.
func cutWords(s string, n int) (string, bool) {
	end := 0
	for i, k := 0, 0; ; k++ {
		st, e := lexis.NextWord(s, i)
		if st == e {
			return s, false
		}
		if k == n {
			return strings.TrimRight(s[:end], " ,;:") + "…", true
		}
		i, end = e, e
	}
}
