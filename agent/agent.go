package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
)

// DefaultMaxToolRounds is the number of tool-call rounds a run allows when
// Config.MaxToolRounds is zero.
const DefaultMaxToolRounds = 8

// ErrToolRounds reports a run whose model still asked for tools after
// Config.MaxToolRounds rounds.
var ErrToolRounds = errors.New("agent: too many tool-call rounds")

// DefaultMaxInputBytes is the default cap on a run's input text (see
// Config.MaxInputBytes): a 1 MiB message is far past any chat model's
// context window.
const DefaultMaxInputBytes = 1 << 20

// ErrInputTooLarge reports a run whose input exceeds Config.MaxInputBytes.
var ErrInputTooLarge = errors.New("agent: input too large")

// Config configures an Agent. The zero value is usable: no instructions, no
// tools, no providers, DefaultMaxToolRounds, slog.Default, time.Now and NewID.
type Config struct {
	// Name names the agent in logs.
	Name string
	// Instructions is the system prompt.
	Instructions string
	// Tools the model may call on every run.
	Tools []Tool
	// ContextProviders run around every run, in order.
	ContextProviders []ContextProvider
	// MaxToolRounds bounds the model calls that answer with tool calls in
	// one run; zero means DefaultMaxToolRounds.
	MaxToolRounds int
	// MaxInputBytes caps the text of a run's input messages, together: a
	// run over it fails with ErrInputTooLarge before any provider or model
	// is called. Zero means DefaultMaxInputBytes; negative means no cap.
	MaxInputBytes int
	// Temperature and MaxTokens are passed on every ChatRequest.
	Temperature *float64
	MaxTokens   int
	// Logger receives provider and tool failures; nil means slog.Default().
	Logger *slog.Logger
	// Now stamps messages; nil means time.Now.
	Now func() time.Time
	// NewID names messages and sessions; nil means NewID.
	NewID func() string
}

// Agent is a chat agent: a model, instructions, tools and context providers.
// An Agent is safe for concurrent use by many sessions.
type Agent struct {
	client ChatClient
	cfg    Config
	tools  map[string]Tool
}

// New returns an agent that talks to client. It panics if client is nil.
func New(client ChatClient, cfg Config) *Agent {
	if client == nil {
		panic("agent.New: nil ChatClient")
	}
	cfg = cfg.withDefaults()
	a := &Agent{client: client, cfg: cfg, tools: make(map[string]Tool, len(cfg.Tools))}
	for _, t := range cfg.Tools {
		a.tools[t.Name()] = t
	}
	return a
}

// withDefaults returns c with every zero field that has a default set to
// it (a negative MaxToolRounds counts as zero; a negative MaxInputBytes
// stays: no cap).
func (c Config) withDefaults() Config {
	if c.MaxToolRounds <= 0 {
		c.MaxToolRounds = DefaultMaxToolRounds
	}
	c.MaxInputBytes = cmp.Or(c.MaxInputBytes, DefaultMaxInputBytes)
	c.Logger = cmp.Or(c.Logger, slog.Default())
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.NewID == nil {
		c.NewID = NewID
	}
	return c
}

// Name returns the agent's configured name.
func (a *Agent) Name() string { return a.cfg.Name }

// Client returns the agent's ChatClient.
func (a *Agent) Client() ChatClient { return a.client }

// Logger returns the agent's logger.
func (a *Agent) Logger() *slog.Logger { return a.cfg.Logger }

// NewSession returns a new session with a fresh id and no user.
func (a *Agent) NewSession() *Session {
	return &Session{id: a.cfg.NewID()}
}

// NewUserSession returns a new session with a fresh id belonging to userID.
// It fails with ErrInvalidUserID for an empty or malformed id.
func (a *Agent) NewUserSession(userID string) (*Session, error) {
	if err := ValidateUserID(userID); err != nil {
		return nil, err
	}
	return &Session{id: a.cfg.NewID(), userID: userID}, nil
}

// Response is the result of a run.
type Response struct {
	// Messages are the messages the run produced, in order: assistant
	// messages (with tool calls) and the tool messages answering them; the
	// last is the final assistant message.
	Messages []Message
	// Usage sums the usage of every model call in the run.
	Usage Usage
}

// Text returns the text of the final assistant message.
func (r *Response) Text() string {
	if r == nil || len(r.Messages) == 0 {
		return ""
	}
	return r.Messages[len(r.Messages)-1].Text
}

// Run sends the input to the model with the session's history and every
// provider's context, executes tool calls, appends the input and the
// produced messages to the session, and returns what the run produced.
//
// Messages in input without an ID or CreatedAt get one. Run fails on an
// empty input, a nil session, a model error or ErrToolRounds; in every case
// the providers' Invoked hooks see the error and the session is unchanged.
func (a *Agent) Run(ctx context.Context, sess *Session, input ...Message) (*Response, error) {
	if err := a.checkInput("Run", sess, input); err != nil {
		return nil, err
	}
	sess.runMu.Lock()
	defer sess.runMu.Unlock()
	t := a.begin(ctx, sess, input)
	resp, err := a.loop(ctx, &t, a.client.Complete, nil)
	return a.finish(ctx, &t, resp, err)
}

// turn is one run in progress: its stamped input, what the providers
// contributed, and the prompt and tools of its model calls.
type turn struct {
	sess    *Session
	input   []Message
	ctxMsgs []Message
	msgs    []Message
	tools   []Tool
	index   map[string]Tool
}

// checkInput validates a run's arguments; op names the method in errors.
func (a *Agent) checkInput(op string, sess *Session, input []Message) error {
	if sess == nil {
		return fmt.Errorf("agent: %s: nil session", op)
	}
	if len(input) == 0 {
		return fmt.Errorf("agent: %s: no input messages", op)
	}
	size := 0
	for i, m := range input {
		if !m.Role.Valid() {
			return fmt.Errorf("agent: %s: input message %d: unknown role %q", op, i, m.Role)
		}
		size += len(m.Text)
	}
	if limit := a.cfg.MaxInputBytes; limit >= 0 && size > limit {
		return fmt.Errorf("%w: %d bytes of input, at most %d", ErrInputTooLarge, size, limit)
	}
	return nil
}

// begin stamps the input, calls every provider's Invoking hook and
// assembles the first model call's prompt and tools. The caller holds
// sess.runMu.
func (a *Agent) begin(ctx context.Context, sess *Session, input []Message) turn {
	input = a.stamp(append([]Message(nil), input...))

	// Invoking: gather every provider's context.
	var (
		instructions = a.cfg.Instructions
		ctxMsgs      []Message
		extraTools   []Tool
		historyKept  bool
	)
	for _, p := range a.cfg.ContextProviders {
		aic, err := a.invoking(ctx, p, sess, input)
		if err != nil {
			a.cfg.Logger.WarnContext(ctx, "context provider Invoking failed; run continues without it",
				"agent", a.cfg.Name, "provider", sourceID(p), "session", sess.id, "err", err)
			continue
		}
		historyKept = historyKept || keepsHistory(p)
		if aic == nil {
			continue
		}
		if s := strings.TrimSpace(aic.Instructions); s != "" {
			if instructions != "" {
				instructions += "\n\n"
			}
			instructions += s
		}
		src := sourceID(p)
		for _, m := range aic.Messages {
			m = a.stampOne(m)
			m.Source = src
			ctxMsgs = append(ctxMsgs, m)
		}
		extraTools = append(extraTools, aic.Tools...)
	}

	tools, toolIndex := a.mergeTools(ctx, extraTools)

	var history []Message
	if !historyKept {
		history = sess.Messages()
	}
	n := len(history) + len(ctxMsgs) + len(input) + 1
	msgs := make([]Message, 0, n+2)
	if instructions != "" {
		msgs = append(msgs, Message{Role: RoleSystem, Text: instructions})
	}
	msgs = append(msgs, ctxMsgs...)
	msgs = append(msgs, history...)
	msgs = append(msgs, input...)
	return turn{sess: sess, input: input, ctxMsgs: ctxMsgs, msgs: msgs, tools: tools, index: toolIndex}
}

// finish calls every provider's Invoked hook with the run's outcome and,
// when the run succeeded, appends the input and the produced messages to
// the session. It returns resp, or runErr when set.
func (a *Agent) finish(ctx context.Context, t *turn, resp *Response, runErr error) (*Response, error) {
	ic := &InvokedContext{Agent: a, Session: t.sess, Request: t.input, Context: t.ctxMsgs, Err: runErr}
	if resp != nil {
		ic.Response = resp.Messages
	}
	for _, p := range a.cfg.ContextProviders {
		if err := a.invoked(ctx, p, ic); err != nil {
			a.cfg.Logger.WarnContext(ctx, "context provider Invoked failed",
				"agent", a.cfg.Name, "provider", sourceID(p), "session", t.sess.id, "err", err)
		}
	}
	if runErr != nil {
		return nil, runErr
	}
	t.sess.AppendMessages(t.input...)
	t.sess.AppendMessages(resp.Messages...)
	return resp, nil
}

// invoking calls p.Invoking, turning a panic into an error so that one bad
// provider cannot take the agent down.
func (a *Agent) invoking(ctx context.Context, p ContextProvider, sess *Session, input []Message) (aic *AIContext, err error) {
	defer func() {
		if r := recover(); r != nil {
			aic, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	return p.Invoking(ctx, &InvokingContext{Agent: a, Session: sess, Messages: input})
}

func (a *Agent) invoked(ctx context.Context, p ContextProvider, ic *InvokedContext) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return p.Invoked(ctx, ic)
}

// mergeTools returns the agent's tools followed by the providers', dropping
// (and logging) a provider tool whose name is already taken.
func (a *Agent) mergeTools(ctx context.Context, extra []Tool) ([]Tool, map[string]Tool) {
	if len(extra) == 0 {
		return a.cfg.Tools, a.tools
	}
	tools := append(make([]Tool, 0, len(a.cfg.Tools)+len(extra)), a.cfg.Tools...)
	index := make(map[string]Tool, len(a.tools)+len(extra))
	for k, v := range a.tools {
		index[k] = v
	}
	for _, t := range extra {
		if _, dup := index[t.Name()]; dup {
			a.cfg.Logger.WarnContext(ctx, "context provider tool dropped: name already in use", "agent", a.cfg.Name, "tool", t.Name())
			continue
		}
		index[t.Name()] = t
		tools = append(tools, t)
	}
	return tools, index
}

// modelCall is one call to the model: ChatClient.Complete for Run, a
// streamed call for RunStream.
type modelCall func(context.Context, *ChatRequest) (*ChatResponse, error)

// loop calls the model and runs the tools it asks for, until it answers
// without tool calls or the round limit is reached. emit, when not nil,
// receives each message of the response as soon as it is complete; when
// it returns false the loop stops with errStopped.
func (a *Agent) loop(ctx context.Context, t *turn, call modelCall, emit func(Message) bool) (*Response, error) {
	resp := &Response{}
	msgs := t.msgs
	for round := 0; ; round++ {
		if err := ctx.Err(); err != nil {
			return resp, fmt.Errorf("agent: run cancelled: %w", err)
		}
		req := &ChatRequest{
			Messages:    msgs,
			Tools:       t.tools,
			Temperature: a.cfg.Temperature,
			MaxTokens:   a.cfg.MaxTokens,
		}
		out, err := call(ctx, req)
		if err != nil && a.dropProviderTools(ctx, t, err) {
			req.Tools = t.tools
			out, err = call(ctx, req)
		}
		if err != nil {
			return resp, fmt.Errorf("agent: model call: %w", err)
		}
		resp.Usage = resp.Usage.Add(out.Usage)
		m := out.Message
		m.Role = RoleAssistant
		m.Source = ""
		m = a.stampOne(m)
		resp.Messages = append(resp.Messages, m)
		if emit != nil && !emit(m) {
			return resp, errStopped
		}
		if len(m.ToolCalls) == 0 {
			return resp, nil
		}
		if round >= a.cfg.MaxToolRounds {
			return resp, fmt.Errorf("%w: model still calling tools after %d rounds", ErrToolRounds, a.cfg.MaxToolRounds)
		}
		msgs = append(msgs, m)
		for _, tc := range m.ToolCalls {
			tm := a.stampOne(ToolResult(tc.ID, a.callTool(ctx, t.index, tc)))
			tm.Name = tc.Name
			resp.Messages = append(resp.Messages, tm)
			msgs = append(msgs, tm)
			if emit != nil && !emit(tm) {
				return resp, errStopped
			}
		}
	}
}

// dropProviderTools handles a model that refuses tools (err wraps
// ErrToolsUnsupported) when every tool of the run is a context
// provider's: the providers' tools go, logged, and it reports true for
// the call to be made again without them. A provider's tool, like any of
// its contributions, is an enhancement the run goes on without; the
// agent's own tools are the caller's, and their refusal fails the run.
func (a *Agent) dropProviderTools(ctx context.Context, t *turn, err error) bool {
	if !errors.Is(err, ErrToolsUnsupported) || len(t.tools) == 0 || len(a.cfg.Tools) > 0 {
		return false
	}
	a.cfg.Logger.WarnContext(ctx, "the model refuses tools: the context providers' tools are not offered in this run",
		"agent", a.cfg.Name, "tools", toolNames(t.index), "err", err)
	t.tools, t.index = nil, nil
	return true
}

// callTool runs one tool call and returns the text the model sees. Failures
// are reported to the model, never returned.
func (a *Agent) callTool(ctx context.Context, index map[string]Tool, tc ToolCall) (result string) {
	t, ok := index[tc.Name]
	if !ok {
		a.cfg.Logger.WarnContext(ctx, "model called an unknown tool", "agent", a.cfg.Name, "tool", tc.Name)
		return fmt.Sprintf("error: unknown tool %q; available tools: %s", tc.Name, toolNames(index))
	}
	defer func() {
		if r := recover(); r != nil {
			a.cfg.Logger.ErrorContext(ctx, "tool panicked", "agent", a.cfg.Name, "tool", tc.Name, "panic", r)
			result = fmt.Sprintf("error: tool %s failed", tc.Name)
		}
	}()
	out, err := t.Call(ctx, tc.Arguments)
	if err != nil {
		a.cfg.Logger.WarnContext(ctx, "tool call failed", "agent", a.cfg.Name, "tool", tc.Name, "err", err)
		return "error: " + err.Error()
	}
	return out
}

func toolNames(index map[string]Tool) string {
	if len(index) == 0 {
		return "(none)"
	}
	names := make([]string, 0, len(index))
	for n := range index {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func (a *Agent) stamp(msgs []Message) []Message {
	for i := range msgs {
		msgs[i] = a.stampOne(msgs[i])
	}
	return msgs
}

func (a *Agent) stampOne(m Message) Message {
	if m.ID == "" {
		m.ID = a.cfg.NewID()
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = a.cfg.Now()
	}
	return m
}
