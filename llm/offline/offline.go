// Package offline is a deterministic, network-free agent.ChatClient: the
// zero-setup default of agentmemory, its demo and its tests.
//
// It is NOT a language model. There is no LLM behind it: it never calls a
// network, never generates free text and never claims to be a model (its
// responses name the model ModelName, "offline-no-llm"). It answers with a
// few fixed, documented rules, so that an agent wired to it runs end to end
// and its memory machinery can be exercised without any credentials. For
// real conversations configure a model (see llm/openai).
//
// # Prompt markers
//
// The memory prompts of agentmemory (interaction metadata, cumulative
// summary, insight extraction…) each start with a marker line naming the
// prompt, Marker(name): MarkerPrefix followed by the name, for example
//
//	agentmemory:prompt=cumulative_summary
//
// as the first non-blank line of the request's system message (or of its
// first message). Complete sends a request with a marker to the Handler
// registered for that name (Config.Handlers or Client.Handle), which
// computes the answer a model would have given, by rule. A marker without a
// handler is an error wrapping ErrUnknownPrompt; a line that starts with
// MarkerPrefix but is not a valid marker is an error wrapping
// ErrMalformedMarker.
//
// # Memory prompts
//
// The memory prompt handlers answer the prompts of package prompts by
// rule; New registers them unless Config.Handlers names them. They read
// the data blocks of the request's last user message (prompts.Blocks) and
// compose:
//
//   - interaction_metadata: a JSON object whose summary is the one or two
//     most informative sentences of the conversation (see below), whose
//     mentioned_topics are its most frequent product names and content
//     words (a two-word phrase when a word occurs as often in it as
//     alone, "monthly contribution") and whose entities are
//     found by pattern: money and percentages ($500, 15%), numbers with a
//     unit (10 years), dates (March 3, 2025; 2030), account and product
//     names (401k, Roth IRA, ETF, HSA…) and capitalised names that do not
//     merely start a sentence (Fidelity, Bank of America), a leading
//     greeting or interjection dropped ("Hey Sarah" is Sarah, "Wow" alone
//     is nothing). Filler words are no topics: besides stopwords, the
//     social and conversational words, interjections (wow, oh, congrats),
//     small number words and "last"/"next";
//   - cumulative_summary: the previous summary followed by the most
//     informative new sentences not already covered (statements: a
//     question is kept only when nothing else is), within
//     prompts.CumulativeSummaryWords words (the least informative previous
//     sentences go first when the budget is short): the three most
//     informative new sentences, then the previous summary, then as many
//     further new ones as the room left holds, the new ones within 3/5 of
//     the budget (six short facts in one fold are all kept);
//   - session_summary: the same from the running summary and the last
//     turns, within prompts.SessionSummaryWords words, as JSON with the
//     key_topics of both;
//   - session_reflection, profile_synthesis and reconcile: insights from
//     the user's first-person statements that fit a category, a profile
//     composed from them, and near-duplicates grouped (never
//     contradictions: rules cannot tell them). reflection.go documents the
//     rules;
//   - answer_judge: CORRECT when the response holds every content word of
//     the reference answer, else WRONG (a paraphrase is WRONG: rules
//     cannot tell meaning).
//
// A sentence's information is the sum, over its distinct content terms
// (stopwords and filler words dropped, stemmed by lexis), of each term's
// frequency in the text being summarised, divided by the square root of
// its length in terms, plus one per entity it contains. Sentences are kept
// whole up to 40 words. The output is deterministic.
//
// Each answer is accepted by the prompt's parser in package prompts.
//
// # Requests without a marker
//
// Plain chat and tool-calling turns follow these rules, in order:
//
//  1. JSON output (ResponseFormat set) fails with ErrJSONUnsupported: only a
//     prompt handler can produce meaningful JSON.
//  2. When the last message is a tool result, the answer composes the
//     trailing tool results: "From memory: " (or "Tool results: " when no
//     answered tool is one of Config.AutoTools) followed by their texts,
//     whitespace collapsed, trimmed to Config.MaxAnswerRunes. No tool is
//     called again in that turn.
//  3. When tools are offered and the last message is a user message, the
//     client calls, at most once each and in the order offered, every tool
//     whose name the user's text contains as words ("retrieve_user_facts",
//     or "retrieve user facts", case-insensitive), and every tool listed in
//     Config.AutoTools when the text "needs memory": it asks a question ('?'
//     or a leading question word such as what/when/how/do/did) or refers
//     to the user's past (I, my, me, we, our, remember, recall, last time,
//     previously…). Required string arguments get the user's text (or the
//     first value of their enum); other required arguments get their
//     schema default. A tool whose required arguments cannot be filled
//     that way is not called.
//  4. Otherwise the answer is extractive: the sentences of the system
//     messages and of the user messages a context provider injected
//     (Message.Source set; never injected assistant messages, which would
//     echo the client's own earlier answers) that share the most content words (stopwords dropped, lightly
//     stemmed) with the latest user message, up to Config.MaxSentences of
//     them in their original order, after the lead "From memory: ". When
//     none shares a word, a short acknowledgement echoes the question's
//     topic: `I have nothing in memory about "…".`, or "Noted." when the
//     text has no content word (greetings and thanks have none).
//
// Answers are cut to MaxTokens words when it is set (FinishReason "length").
// Usage counts words, not tokens: a rough, documented estimate.
//
// The same request always yields a byte-identical response.
package offline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/agentmemory/agentmemory/agent"
)

// ModelName is the ChatResponse.Model of every response the client
// composes itself; a handler may set another.
const ModelName = "offline-no-llm"

// RetrieveUserFactsTool is the memory tool called by default when a user's
// text needs memory.
const RetrieveUserFactsTool = "retrieve_user_facts"

// Defaults for the zero Config.
const (
	DefaultMaxSentences   = 3
	DefaultMaxAnswerRunes = 800
)

// maxArgRunes bounds a string argument filled from the user's text.
const maxArgRunes = 1000

// Errors reported by Complete.
var (
	// ErrUnknownPrompt reports a request whose marker names no handler.
	ErrUnknownPrompt = errors.New("offline: no handler for prompt")
	// ErrJSONUnsupported reports a JSON-mode request without a prompt
	// handler: the offline client composes plain text only.
	ErrJSONUnsupported = errors.New("offline: JSON output needs a prompt handler (no LLM is configured)")
)

// Handler answers the requests of one prompt template, by rule.
type Handler func(ctx context.Context, req *agent.ChatRequest) (*agent.ChatResponse, error)

// Config configures a Client. The zero value is usable: the memory prompt
// handlers only, AutoTools = [RetrieveUserFactsTool], DefaultMaxSentences
// and DefaultMaxAnswerRunes.
type Config struct {
	// Handlers maps prompt names (see Marker) to their handlers. A handler
	// named like one of the memory prompts (interaction_metadata,
	// cumulative_summary, session_summary) replaces the default one.
	Handlers map[string]Handler
	// AutoTools are called, when offered, for a user message that needs
	// memory. nil means []string{RetrieveUserFactsTool}; an empty non-nil
	// slice means none.
	AutoTools []string
	// MaxSentences bounds an extractive answer; zero means
	// DefaultMaxSentences.
	MaxSentences int
	// MaxAnswerRunes bounds the text of a composed answer, lead included;
	// zero means DefaultMaxAnswerRunes.
	MaxAnswerRunes int
}

// Client is the offline ChatClient. It is safe for concurrent use.
type Client struct {
	mu       sync.RWMutex
	handlers map[string]Handler

	auto         []string
	maxSentences int
	maxRunes     int
}

var _ agent.ChatClient = (*Client)(nil)

// New returns a client configured by cfg. It fails on an invalid prompt
// name, a nil handler or negative limits.
func New(cfg Config) (*Client, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	c := &Client{
		handlers:     make(map[string]Handler, len(cfg.Handlers)),
		auto:         slices.Clone(cfg.AutoTools),
		maxSentences: cfg.MaxSentences,
		maxRunes:     cfg.MaxAnswerRunes,
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Handlers)) { // first error deterministic
		if err := c.Handle(name, cfg.Handlers[name]); err != nil {
			return nil, err
		}
	}
	for name, h := range memoryHandlers() {
		if _, own := cfg.Handlers[name]; !own {
			c.handlers[name] = h
		}
	}
	return c, nil
}

// withDefaults returns c with every zero field that has a default set to
// it. An empty, non-nil AutoTools stays: no tool is called automatically.
func (c Config) withDefaults() Config {
	if c.AutoTools == nil {
		c.AutoTools = []string{RetrieveUserFactsTool}
	}
	c.MaxSentences = cmp.Or(c.MaxSentences, DefaultMaxSentences)
	c.MaxAnswerRunes = cmp.Or(c.MaxAnswerRunes, DefaultMaxAnswerRunes)
	return c
}

// validate reports the first field of c that is out of range. The
// handlers are checked as they are added.
func (c Config) validate() error {
	if c.MaxSentences < 0 || c.MaxAnswerRunes < 0 {
		return fmt.Errorf("offline: negative limit (MaxSentences %d, MaxAnswerRunes %d)", c.MaxSentences, c.MaxAnswerRunes)
	}
	return nil
}

// Handle registers h for the prompt named name. It fails if name is not
// ValidName, h is nil or name already has a handler.
func (c *Client) Handle(name string, h Handler) error {
	if !ValidName(name) {
		return fmt.Errorf("offline: handle %q: invalid prompt name", name)
	}
	if h == nil {
		return fmt.Errorf("offline: handle %q: nil handler", name)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.handlers[name]; dup {
		return fmt.Errorf("offline: handle %q: prompt already has a handler", name)
	}
	c.handlers[name] = h
	return nil
}

func (c *Client) handler(name string) Handler {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.handlers[name]
}

// Complete implements agent.ChatClient with the rules of the package
// documentation.
func (c *Client) Complete(ctx context.Context, req *agent.ChatRequest) (*agent.ChatResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("offline: %w", err)
	}
	if req == nil {
		return nil, errors.New("offline: nil request")
	}
	name, found, err := FindMarker(req.Messages)
	if err != nil {
		return nil, err
	}
	if found {
		return c.dispatch(ctx, name, req)
	}
	if req.ResponseFormat != nil {
		return nil, fmt.Errorf("%w: response format %q", ErrJSONUnsupported, req.ResponseFormat.Type)
	}
	if len(req.Messages) == 0 {
		return nil, errors.New("offline: request has no messages")
	}
	var resp *agent.ChatResponse
	last := req.Messages[len(req.Messages)-1]
	switch {
	case last.Role == agent.RoleTool:
		resp = c.text(req, c.answerToolResults(req.Messages))
	case last.Role == agent.RoleUser && len(req.Tools) > 0:
		if calls := c.toolCalls(req, last.Text); len(calls) > 0 {
			resp = &agent.ChatResponse{
				Message:      agent.Message{Role: agent.RoleAssistant, ToolCalls: calls},
				FinishReason: "tool_calls",
				Model:        ModelName,
			}
			out := 0
			for _, tc := range calls {
				out += countWords(string(tc.Arguments))
			}
			resp.Usage = usage(req, out)
			break
		}
		fallthrough
	default:
		resp = c.text(req, c.answer(req.Messages))
	}
	// A long request may have outlived its context; do not report an
	// answer for a cancelled call.
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("offline: %w", err)
	}
	return resp, nil
}

// dispatch runs the handler of a marked prompt, turning a panic into an
// error.
func (c *Client) dispatch(ctx context.Context, name string, req *agent.ChatRequest) (resp *agent.ChatResponse, err error) {
	h := c.handler(name)
	if h == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownPrompt, name)
	}
	defer func() {
		if r := recover(); r != nil {
			resp, err = nil, fmt.Errorf("offline: prompt %q handler panicked: %v", name, r)
		}
	}()
	resp, err = h(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("offline: prompt %q: %w", name, err)
	}
	if resp == nil {
		return nil, fmt.Errorf("offline: prompt %q: handler returned no response", name)
	}
	if resp.Message.Role == "" {
		resp.Message.Role = agent.RoleAssistant
	}
	if resp.Model == "" {
		resp.Model = ModelName
	}
	return resp, nil
}

// text wraps a composed answer, applying MaxTokens (as words).
func (c *Client) text(req *agent.ChatRequest, answer string) *agent.ChatResponse {
	answer = strings.ToValidUTF8(answer, "")
	finish := "stop"
	if req.MaxTokens > 0 {
		if cut, ok := cutWords(answer, req.MaxTokens); ok {
			answer, finish = cut, "length"
		}
	}
	return &agent.ChatResponse{
		Message:      agent.Message{Role: agent.RoleAssistant, Text: answer},
		Usage:        usage(req, countWords(answer)),
		FinishReason: finish,
		Model:        ModelName,
	}
}

// usage estimates token usage as word counts.
func usage(req *agent.ChatRequest, completion int) agent.Usage {
	prompt := 0
	for _, m := range req.Messages {
		prompt += countWords(m.Text)
		for _, tc := range m.ToolCalls {
			prompt += countWords(tc.Name) + countWords(string(tc.Arguments))
		}
	}
	return agent.Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
}

// callID returns a deterministic tool call id for the i-th call of a
// request.
func callID(req *agent.ChatRequest, i int, name string) string {
	h := fnv.New64a()
	for _, m := range req.Messages {
		h.Write([]byte(m.Role))
		h.Write([]byte{0})
		h.Write([]byte(m.Text))
		h.Write([]byte{0})
	}
	fmt.Fprintf(h, "%d\x00%s", i, name)
	return fmt.Sprintf("call_offline_%016x", h.Sum64())
}

// truncateRunes cuts s to at most max runes, at a word boundary when one is
// near, marking the cut with "…".
func truncateRunes(s string, max int) string {
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	if max == 1 {
		return "…"
	}
	// Byte offset of rune max-1, leaving room for the ellipsis.
	end, n := 0, 0
	for i := range s {
		if n == max-1 {
			end = i
			break
		}
		n++
	}
	cut := s[:end]
	if sp := strings.LastIndexByte(cut, ' '); sp > len(cut)*4/5 {
		cut = cut[:sp]
	}
	return strings.TrimRight(cut, " ,;:") + "…"
}
