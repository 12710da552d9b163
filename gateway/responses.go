package gateway

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/gateway/responses"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/tokens"
)

// ContextTokensHeader is the response header of the Responses door that
// states the token saving of the compressed context: "sent=N; chain=M",
// where N is what the upstream was sent (instructions, memory block,
// active turns, input) and M what it would have been sent had the gateway
// resent the whole chain (instructions, every turn recorded in the
// chain's session, input), both counted with the memory keeper's token
// counter (tokens.BPE).
const ContextTokensHeader = "X-Memory-Context-Tokens"

// chain is what the Responses door adds to a request: the client sends
// no history (previous_response_id names it), so the gateway keeps it in
// the user's memory session and injects it.
type chain struct {
	req *responses.Request
	// prev is the memory session previous_response_id names, or empty.
	prev string
	// session is the memory session the answer belongs to; it names the
	// response (responseID).
	session string
	// pending is the assistant message of the previous response's tool
	// calls, which the client's function_call_output items answer.
	pending *agent.Message
	// turnTokens are the tokens of the turns of the session continued.
	turnTokens int
	// sent and total are the tokens of the context the upstream is sent
	// and of the whole chain (ContextTokensHeader); measured is false when
	// there is no chain to measure.
	sent, total int
	measured    bool
}

// The shape of the response ids the gateway gives: "resp_", 24 random hex
// digits, "_", then the memory session's id in unpadded base64url. An id
// names its session; it resolves only in the requesting user's own
// memory, where a session of another user is not found.
const (
	respPrefix = "resp_"
	respRandom = 24
)

// responseID returns a new response id naming memory session session, or
// a plain one without a session.
func responseID(session string) string {
	if session == "" {
		return responses.NewResponseID()
	}
	return responses.NewResponseID()[:len(respPrefix)+respRandom] + "_" + base64.RawURLEncoding.EncodeToString([]byte(session))
}

// sessionOfResponse returns the memory session a response id of the
// gateway names.
func sessionOfResponse(id string) (string, bool) {
	rest, ok := strings.CutPrefix(id, respPrefix)
	if !ok || len(rest) < respRandom+2 || rest[respRandom] != '_' {
		return "", false
	}
	if _, err := hex.DecodeString(rest[:respRandom]); err != nil {
		return "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(rest[respRandom+1:])
	if err != nil || agent.ValidateSessionID(string(b)) != nil {
		return "", false
	}
	return string(b), true
}

// previousNotFound is the error of a previous_response_id the requesting
// user's memory does not hold, as OpenAI's Responses API answers an
// unknown id.
func previousNotFound(id string) *apiError {
	e := badRequest("previous_response_id", "")
	code := "previous_response_not_found"
	e.Code = &code
	e.Message = fmt.Sprintf("Previous response with id '%s' not found.", id)
	return e
}

// serveResponses serves POST /v1/responses: the request is translated into
// a Chat Completions request (package responses) and runs through the
// same exchange as the Chat Completions door, with an emitter that
// translates the answer back.
func (h *Handler) serveResponses(w http.ResponseWriter, r *http.Request) {
	c, err := h.readResponsesRequest(w, r)
	if err != nil {
		h.fail(w, err)
		return
	}
	h.exchange(w, r, c, &responsesEmitter{c: c, log: h.log})
}

// readResponsesRequest reads a Responses request into a chat request
// carrying its chain.
func (h *Handler) readResponsesRequest(w http.ResponseWriter, r *http.Request) (*chatRequest, error) {
	body, err := readBody(w, r, h.cfg.MaxBodyBytes)
	if err != nil {
		return nil, err
	}
	req, err := responses.ParseRequest(body)
	if err != nil {
		return nil, translationError(err)
	}
	// The gateway's extensions are its own: they do not go upstream.
	ext := map[string]json.RawMessage{}
	for _, k := range []string{"memory_config", "memory_context"} {
		if v, ok := req.Passthrough[k]; ok {
			ext[k] = v
			delete(req.Passthrough, k)
		}
	}
	cb, err := req.ChatBody()
	if err != nil {
		return nil, translationError(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(cb, &fields); err != nil {
		return nil, fmt.Errorf("gateway: translated request: %w", err)
	}
	for k, v := range ext {
		fields[k] = v
	}
	c, err := newChatRequest(fields)
	if err != nil {
		return nil, err
	}
	c.session = req.Metadata["session_id"]
	c.chain = &chain{req: req}
	if id := req.PreviousResponseID; id != "" {
		sid, ok := sessionOfResponse(id)
		if !ok {
			return nil, previousNotFound(id)
		}
		c.chain.prev = sid
	}
	return c, nil
}

// translationError is the 400 of a request package responses refused.
func translationError(err error) *apiError {
	code := "invalid_request"
	if errors.Is(err, responses.ErrUnsupported) {
		code = "unsupported_parameter"
	}
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: &code, Message: err.Error()}
}

// chainPrefix starts the session ids the gateway gives new chains.
const chainPrefix = "chain-"

// newChainID names the memory session of a new chain.
func newChainID() string { return chainPrefix + agent.NewID() }

// resume reads what the chain's session holds for a request that
// continues it: the session must be the user's (else the id is not
// found), its turns measure the chain (ch.turnTokens), and the tool calls
// the client answers are taken from its last turn. Only the turns not
// counted yet are read and counted (tallies); the session's unpruned
// turns are read always, for the last one. A store error is returned as
// it is, for the request to go on without memory.
func (h *Handler) resume(ctx context.Context, c *chatRequest, userID string) error {
	ch := c.chain
	st := h.mem.Store()
	doc, err := st.GetSession(ctx, userID, ch.prev)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return previousNotFound(ch.req.PreviousResponseID)
		}
		return err
	}
	key := userID + "\x00" + ch.prev
	t, known := h.tallies.get(key)
	from := 1
	if known {
		from = min(t.seq+1, doc.State.PrunedThrough+1)
	}
	turns, err := st.ListTurns(ctx, userID, ch.prev, from)
	if err != nil {
		return err
	}
	for _, tr := range turns {
		if tr.Seq <= t.seq {
			continue
		}
		for _, m := range tr.Messages {
			t.tokens += tokens.CountMessage(h.counter, agent.Message{Role: agent.Role(m.Role), Name: m.Name, Text: m.Content})
		}
		t.seq = tr.Seq
	}
	h.tallies.put(key, t)
	ch.turnTokens = t.tokens
	if len(turns) > 0 {
		ch.pending = pendingCalls(turns[len(turns)-1], ch.req.Input)
	}
	return nil
}

// tally is what is counted of a chain's session: its turns through seq.
type tally struct{ seq, tokens int }

// tallies keep a tally per chain session (by user and session), so that a
// request of a long chain counts only the turns recorded since the last.
// They are bounded: when full they start afresh (a session not tallied is
// counted whole, from the store).
type tallies struct {
	max int
	mu  sync.Mutex
	m   map[string]tally
}

func (ts *tallies) get(key string) (tally, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t, ok := ts.m[key]
	return t, ok
}

func (ts *tallies) put(key string, t tally) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.m == nil || len(ts.m) >= ts.max {
		ts.m = make(map[string]tally)
	}
	if cur, ok := ts.m[key]; !ok || cur.seq <= t.seq {
		ts.m[key] = t
	}
}

// pendingCalls returns the assistant message of the tool calls of the
// chain's last turn that the input answers (function_call_output items
// with no function_call before them in the input), or nil. A turn keeps
// its calls' names and arguments, in order, not their ids: the outputs'
// call ids are given to the calls in order.
func pendingCalls(last *store.Turn, input []agent.Message) *agent.Message {
	called := map[string]bool{}
	var outputs []string
	for _, m := range input {
		for _, tc := range m.ToolCalls {
			called[tc.ID] = true
		}
		if m.Role == agent.RoleTool && !called[m.ToolCallID] {
			outputs = append(outputs, m.ToolCallID)
		}
	}
	if len(outputs) == 0 || last.Metadata["tools"] == "" {
		return nil
	}
	var traces []struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Result    string          `json:"result"`
	}
	if json.Unmarshal([]byte(last.Metadata["tools"]), &traces) != nil {
		return nil
	}
	var open []agent.ToolCall
	for _, t := range traces {
		if t.Result == "" {
			open = append(open, agent.ToolCall{Name: t.Name, Arguments: agent.ToolArguments(string(t.Arguments))})
		}
	}
	if len(open) < len(outputs) {
		return nil
	}
	open = open[len(open)-len(outputs):]
	for i := range open {
		open[i].ID = outputs[i]
	}
	return &agent.Message{Role: agent.RoleAssistant, ToolCalls: open}
}

// countChain measures the chain: the request's instructions, every turn
// of the chain's session (counted by resume) and the input, as the
// upstream would have been sent them without memory.
func countChain(counter tokens.Counter, ch *chain) int {
	var msgs []agent.Message
	if ch.req.Instructions != "" {
		msgs = append(msgs, agent.SystemText(ch.req.Instructions))
	}
	if ch.pending != nil {
		msgs = append(msgs, *ch.pending)
	}
	msgs = append(msgs, ch.req.Input...)
	return ch.turnTokens + tokens.CountMessages(counter, msgs)
}

// countSent measures the messages of c as forwarded.
func countSent(counter tokens.Counter, c *chatRequest) int {
	msgs := make([]agent.Message, 0, len(c.messages))
	for _, raw := range c.messages {
		var v messageView
		_ = json.Unmarshal(raw, &v)
		msgs = append(msgs, agent.Message{Role: agent.Role(v.Role), Name: v.Name, Text: v.text(), ToolCallID: v.ToolCallID, ToolCalls: toolCalls(v.ToolCalls)})
	}
	return tokens.CountMessages(counter, msgs)
}

// injectHistory puts the chain's earlier turns (the keeper's active turns
// and the assistant message of the tool calls the input answers) after
// the request's leading system messages, before its input.
func (c *chatRequest) injectHistory(history []agent.Message) {
	if len(history) == 0 {
		return
	}
	at := 0
	for at < len(c.views) && (c.views[at].Role == "system" || c.views[at].Role == "developer") {
		at++
	}
	msgs := make([]json.RawMessage, 0, len(history))
	views := make([]messageView, 0, len(history))
	for _, m := range history {
		cm := map[string]any{"role": string(m.Role), "content": m.Text}
		if len(m.ToolCalls) > 0 {
			calls := make([]wireToolCall, len(m.ToolCalls))
			for i, tc := range m.ToolCalls {
				calls[i].ID, calls[i].Type = tc.ID, "function"
				calls[i].Function.Name, calls[i].Function.Arguments = tc.Name, string(tc.Arguments)
			}
			cm["tool_calls"] = calls
			if m.Text == "" {
				cm["content"] = nil
			}
		}
		if m.Name != "" {
			cm["name"] = m.Name
		}
		b, _ := json.Marshal(cm)
		var v messageView
		_ = json.Unmarshal(b, &v)
		msgs, views = append(msgs, b), append(views, v)
	}
	c.messages = append(c.messages[:at:at], append(msgs, c.messages[at:]...)...)
	c.views = append(c.views[:at:at], append(views, c.views[at:]...)...)
}

// turn is the turn of a Responses request: its input and the answer.
// Unlike a Chat Completions client, a Responses client does not resend
// what it was answered, so every answer is recorded, one calling the
// client's tools included (the outputs come in the next request).
func (ch *chain) turn(a *answer) (req, resp []agent.Message) {
	pending := ch.pending
	for _, m := range ch.req.Input {
		m.ID = agent.NewID()
		switch m.Role {
		case agent.RoleUser:
			req = append(req, m)
		case agent.RoleAssistant:
			resp = append(resp, m)
		case agent.RoleTool:
			if pending != nil {
				resp = append(resp, *pending)
				pending = nil
			}
			resp = append(resp, m)
		}
	}
	resp = append(resp, agent.Message{ID: agent.NewID(), Role: agent.RoleAssistant, Text: a.text.String(), ToolCalls: toolCalls(a.calls)})
	return req, resp
}

// responsesEmitter writes the upstream's Chat Completions answer as a
// Responses answer.
type responsesEmitter struct {
	c   *chatRequest
	log *slog.Logger
	st  *responses.Stream
}

func (e *responsesEmitter) meta() responses.Meta {
	return responses.Meta{ID: responseID(e.c.chain.session), Request: e.c.chain.req}
}

func (e *responsesEmitter) header(h http.Header) {
	if ch := e.c.chain; ch.measured {
		h.Set(ContextTokensHeader, fmt.Sprintf("sent=%d; chain=%d", ch.sent, ch.total))
	}
}

func (e *responsesEmitter) completion(w http.ResponseWriter, body []byte) {
	res, err := responses.FromChat(body, e.meta())
	if err != nil {
		e.log.Warn("gateway: the upstream's answer could not be translated", "err", err)
		writeError(w, upstreamFailed(http.StatusBadGateway, "the model endpoint's answer could not be translated: %v", err))
		return
	}
	e.header(w.Header())
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(res.Body)
}

func (e *responsesEmitter) streamHeader(h http.Header) {
	e.header(h)
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
}

func (e *responsesEmitter) event(w io.Writer, line []byte) error {
	if e.st == nil {
		e.st = responses.NewStream(w, e.meta())
	}
	data, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:"))
	if !ok {
		return nil
	}
	data = bytes.TrimSpace(data)
	if string(data) == "[DONE]" {
		_, err := e.st.Finish()
		if errors.Is(err, responses.ErrStreamCut) {
			return nil
		}
		return err
	}
	if err := e.st.Chunk(data); err != nil {
		if errors.Is(err, responses.ErrInvalid) || errors.Is(err, responses.ErrUpstream) {
			_, ferr := e.st.Fail(err.Error())
			return ferr
		}
		return err
	}
	return nil
}

func (e *responsesEmitter) end(w io.Writer, completed bool) {
	if e.st == nil {
		e.st = responses.NewStream(w, e.meta())
	}
	if completed {
		_, _ = e.st.Finish() // a no-op once [DONE] finished it
		return
	}
	_, _ = e.st.Fail("the model endpoint's stream ended before its answer did")
}

// follow names a chain's memory session after the one the provider put
// the request in: after an idle end the agent session goes on in a new
// memory session, which the response id then names. The agent session
// is kept under that id from then on (the old entry is let go without
// ending it: its memory session has ended), so that the chain's next
// request finds it, and an idle end ends the session the chain is in.
// A session the client named (X-Memory-Session, metadata.session_id) is
// left under its name, which the response id names: the Chat Completions
// door reaches it by that name too.
func (h *Handler) follow(ctx context.Context, plan *memoryPlan, ch *chain) {
	if !strings.HasPrefix(plan.sess.ID(), chainPrefix) {
		return
	}
	man, ok := h.p.LastManifest(plan.sess)
	if !ok || man.SessionID == "" || man.SessionID == plan.sess.ID() {
		return
	}
	h.followTo(ctx, plan, ch, man.SessionID)
}

// followTo keeps the chain's agent session under memory session to, the
// one it went on in, which the response id then names. When the move
// fails the chain stays under the id it is kept under, which the response
// id names instead: the chain's next request finds the agent session
// there, and goes on in to (the provider keeps it in the agent session),
// reading its earlier turns from the memory session that ended.
func (h *Handler) followTo(ctx context.Context, plan *memoryPlan, ch *chain, to string) {
	// The request's lease moves with it: the new entry does not idle out
	// under it.
	if err := h.sessions.move(plan.lease, to); err != nil {
		h.log.WarnContext(ctx, "gateway: the chain's agent session could not move to the memory session it went on in; the response names the one it is kept under",
			"session", plan.sess.ID(), "next", to, "err", err)
		return
	}
	plan.sess = plan.lease.sess
	ch.session = to
}
