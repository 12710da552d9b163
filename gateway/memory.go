package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/keeper"
	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/retrieval"
)

// memoryPlan is what memory does for one request.
type memoryPlan struct {
	state memoryState
	scope string         // the gateway user
	sess  *agent.Session // nil without memory
	// lease holds sess open (no idle end) until the request's end
	// releases it; nil without memory.
	lease  *lease
	record bool       // record the turn
	tool   agent.Tool // retrieve_user_facts, when offered
}

// userOf returns the request's user and the field or header it came
// from: memory_context.user_id, else the X-Memory-User header, else the
// Chat Completions user field.
func userOf(r *http.Request, c *chatRequest) (user, from string) {
	switch {
	case c != nil && c.memCtx.UserID != "":
		return c.memCtx.UserID, "memory_context.user_id"
	case r.Header.Get(UserHeader) != "":
		return r.Header.Get(UserHeader), UserHeader
	case c != nil && c.user != "":
		return c.user, "user"
	}
	return "", ""
}

// checkUser validates a gateway user: a valid agent user id whose store
// user id (the memory store's scope) is valid too.
func (h *Handler) checkUser(user, from string) error {
	if err := agent.ValidateUserID(user); err != nil {
		return badRequest(from, "%v", err)
	}
	if err := agent.ValidateUserID(h.mem.UserID(user)); err != nil {
		return badRequest(from, "too long to be a scope of memory store %q: %v", h.mem.Name(), err)
	}
	return nil
}

// prepare decides what memory does for c and puts the memory block into
// its messages. Its error is a 400 naming the field; memory's own
// failures degrade the plan instead.
func (h *Handler) prepare(ctx context.Context, r *http.Request, c *chatRequest) (*memoryPlan, error) {
	user, from := userOf(r, c)
	prev := c.chain != nil && c.chain.prev != ""
	if user == "" {
		if prev { // a chain is kept in a user's memory
			return nil, previousNotFound(c.chain.req.PreviousResponseID)
		}
		return &memoryPlan{state: skipped("no-user")}, nil
	}
	if err := h.checkUser(user, from); err != nil {
		return nil, err
	}
	sid, sfrom := r.Header.Get(SessionHeader), SessionHeader
	if sid == "" {
		sid, sfrom = c.session, "metadata.session_id"
	}
	if sid != "" {
		if err := agent.ValidateSessionID(sid); err != nil {
			return nil, badRequest(sfrom, "%v", err)
		}
	}
	switch {
	case prev:
		sid, sfrom = c.chain.prev, "previous_response_id"
	case sid != "":
	case c.chain != nil: // a new chain is a new session
		sid = newChainID()
	default:
		sid = defaultSession
	}
	mc := c.memCfg
	if mc.Enabled != nil && !*mc.Enabled {
		if prev {
			return nil, badRequest("memory_config.enabled", "false, but previous_response_id continues a chain the gateway keeps in memory")
		}
		return &memoryPlan{state: skipped("disabled")}, nil
	}
	if c.chain != nil {
		c.chain.session = sid
	}
	// The chain is resolved before its session is taken: an id that is
	// not the user's leaves nothing behind.
	if prev {
		err := h.resume(ctx, c, h.mem.UserID(user))
		var ae *apiError
		if errors.As(err, &ae) {
			return nil, err
		}
		if err != nil {
			h.log.WarnContext(ctx, "gateway: memory unavailable (reading the chain failed); forwarding without it", "user", user, "err", err)
			return &memoryPlan{state: degraded("store")}, nil
		}
	}
	l, err := h.sessions.get(h.mem.UserID(user), sid)
	if err != nil {
		return nil, badRequest(sfrom, "%v", err)
	}
	sess := l.sess
	plan := &memoryPlan{scope: user, sess: sess, lease: l, record: !h.cfg.AutoStoreOff, state: memoryState{state: "used"}}
	if mc.AutoStore != nil {
		plan.record = *mc.AutoStore
	}
	if c.chain != nil && !c.chain.req.Store {
		plan.record = false // "store": false: the turn is not kept
	}

	last := c.lastUser()
	var input []agent.Message
	if last >= 0 {
		input = []agent.Message{agent.UserText(c.views[last].text())}
	}
	// The memory store's TTL holds at this door too.
	if err := h.mem.Expire(ctx, user); err != nil {
		h.log.WarnContext(ctx, "gateway: memory unavailable (expiring old memories failed); forwarding without it", "user", user, "err", err)
		l.release() // the request goes on without the session
		return &memoryPlan{state: degraded("store")}, nil
	}
	aic, err := h.p.Invoking(ctx, &agent.InvokingContext{Session: sess, Messages: input})
	if err != nil {
		h.log.WarnContext(ctx, "gateway: memory unavailable; forwarding without it", "user", user, "err", err)
		l.release()
		return &memoryPlan{state: degraded("store")}, nil
	}
	// The session block; the keeper's active turns only for a chain (a
	// Chat Completions client sends its history itself). The provider's
	// tool is not offered (the gateway's own is, with
	// Config.RetrievalTool).
	var parts []string
	var history []agent.Message
	for _, m := range aic.Messages {
		switch {
		case m.Role == agent.RoleSystem:
			if len(parts) == 0 {
				parts = append(parts, keeper.Instructions)
			}
			parts = append(parts, m.Text)
		case c.chain != nil:
			history = append(history, m)
		}
	}
	if c.chain != nil {
		if c.chain.pending != nil {
			history = append(history, *c.chain.pending)
		}
		h.follow(ctx, plan, c.chain)
		// Before the search: a vague follow-up is rewritten from the
		// chain's recent turns, as from a Chat Completions client's.
		c.injectHistory(history)
		last = c.lastUser()
	}
	if block, ok := h.retrieve(ctx, c, plan, last); ok && block != "" {
		parts = append(parts, block)
	}
	if h.cfg.RetrievalTool {
		plan.tool = h.retriever.Tool(h.mem.UserID(user))
		parts = append(parts, toolInstructions)
	}
	if len(parts) > 0 {
		c.inject(strings.Join(parts, "\n\n"))
	}
	if c.chain != nil {
		c.chain.sent = countSent(h.counter, c)
		c.chain.total = countChain(h.counter, c.chain)
		c.chain.measured = true
	}
	if !plan.record {
		plan.state.add("store=off")
	}
	return plan, nil
}

// toolInstructions tell the model about retrieve_user_facts.
const toolInstructions = "When the answer may depend on something the user told you in an earlier conversation, call " + retrieval.ToolName + " before answering."

// retrieve searches the user's memory for the last user message, when
// the pre-filter (retrieval.NeedsMemory) says it may need it, with the
// query rewritten from the client's recent messages, and returns the
// fenced block of what it found. ok is false when the search failed (the
// plan is degraded).
func (h *Handler) retrieve(ctx context.Context, c *chatRequest, plan *memoryPlan, last int) (block string, ok bool) {
	limit := h.cfg.RetrievalLimit
	if n := c.memCfg.RetrievalLimit; n != nil {
		limit = *n
	}
	if limit == 0 {
		plan.state.add("retrieval=off")
		return "", true
	}
	if last < 0 || !retrieval.NeedsMemory(c.views[last].text()) {
		plan.state.add("retrieval=skipped")
		return "", true
	}
	rt := h.retriever
	ctx, cancel := context.WithTimeout(ctx, rt.Config().Timeout)
	defer cancel()
	var recent []prompts.Turn
	for _, v := range c.views[:last] {
		if (v.Role == "user" || v.Role == "assistant") && strings.TrimSpace(v.text()) != "" {
			recent = append(recent, prompts.Turn{Role: v.Role, Text: v.text()})
		}
	}
	query := rt.Rewrite(ctx, recent, c.views[last].text())
	ms, err := rt.Search(ctx, h.mem.UserID(plan.scope), query, retrieval.SearchOptions{TopK: limit, Kinds: c.memCfg.kinds()})
	if err != nil {
		h.log.WarnContext(ctx, "gateway: memory search failed; forwarding with the session's memory only", "user", plan.scope, "err", err)
		plan.state = degraded("retrieval")
		return "", false
	}
	if t := c.memCfg.SimilarityThreshold; t != nil && len(ms) > 0 {
		ms = relevant(ms, *t)
	}
	plan.state.add("retrieved=%d", len(ms))
	return retrieval.AutoBlock(ms), true
}

// relevant keeps the memories whose score is at least threshold times the
// best one's: similarity_threshold is relative to what the search found
// (retrieval scores by relevance relative to the user's own documents,
// never by absolute cosine), so 0 keeps all, 1 only the best.
func relevant(ms []retrieval.Memory, threshold float64) []retrieval.Memory {
	best := ms[0].Score
	for _, m := range ms {
		best = max(best, m.Score)
	}
	var out []retrieval.Memory
	for _, m := range ms {
		if m.Score >= threshold*best {
			out = append(out, m)
		}
	}
	return out
}

// inject puts text in the request as one system message: merged into
// the client's leading system (or developer) message, after its own
// text, or placed first when there is none.
func (c *chatRequest) inject(text string) {
	if len(c.views) > 0 && (c.views[0].Role == "system" || c.views[0].Role == "developer") {
		var msg map[string]json.RawMessage
		if json.Unmarshal(c.messages[0], &msg) == nil {
			var s string
			var parts []json.RawMessage
			switch {
			case json.Unmarshal(msg["content"], &s) == nil:
				msg["content"], _ = json.Marshal(s + "\n\n" + text)
			case json.Unmarshal(msg["content"], &parts) == nil:
				part, _ := json.Marshal(map[string]string{"type": "text", "text": text})
				msg["content"], _ = json.Marshal(append(parts, part))
			default:
				msg = nil
			}
			if msg != nil {
				c.messages[0], _ = json.Marshal(msg)
				return
			}
		}
	}
	sys, _ := json.Marshal(map[string]string{"role": "system", "content": text})
	c.messages = append([]json.RawMessage{sys}, c.messages...)
	c.views = append([]messageView{{Role: "system"}}, c.views...)
}
