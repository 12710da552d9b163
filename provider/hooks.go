package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/keeper"
	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/retrieval"
	"github.com/agentmemory/agentmemory/store"
)

// Invoking implements agent.ContextProvider: it returns the session's
// memory (fenced block and active turns) and records its manifest.
func (p *MemoryProvider) Invoking(ctx context.Context, ic *agent.InvokingContext) (*agent.AIContext, error) {
	userID, err := p.userOf(ic.Session)
	if err != nil {
		return nil, err
	}
	if p.cfg.Mode == ModePerRun {
		if err := ic.Session.SetState(stateRunSession, runSessionID(ic.Session.ID())); err != nil {
			return nil, err
		}
	}
	id, ls, err := p.current(ctx, ic.Session, userID, true)
	if err != nil {
		return nil, err
	}
	p.touch(userID, id, ls)
	c := ls.ks.RunMemory()

	aic := &agent.AIContext{}
	if c.Block != "" {
		aic.Instructions = keeper.Instructions
		aic.Messages = append(aic.Messages, agent.Message{ID: "memory-" + id, Role: agent.RoleSystem, Text: c.Block})
	}
	if p.cfg.Retrieval.auto() {
		if block, items := p.autoRetrieve(ctx, userID, ic.Messages, c); block != "" {
			aic.Messages = append(aic.Messages, agent.Message{ID: "memories-" + id, Role: agent.RoleSystem, Text: block})
			c.Manifest.Items = append(c.Manifest.Items, items...)
		}
	}
	for _, t := range c.Turns {
		for _, m := range t.Messages {
			aic.Messages = append(aic.Messages, agent.Message{ID: m.ID, Role: agent.Role(m.Role), Name: m.Name, Text: m.Content, CreatedAt: t.Time})
		}
	}
	if ls.tool != nil {
		aic.Tools = []agent.Tool{ls.tool}
		if c.Block == "" {
			aic.Instructions = retrievalInstructions
		} else {
			aic.Instructions += " " + retrievalInstructions
		}
	}
	p.mu.Lock()
	p.manifests.put(liveKey(userID, ic.Session.ID()), c.Manifest)
	p.mu.Unlock()
	p.log.DebugContext(ctx, "memory: context injected", "user", userID, "session", id,
		"tokens", c.Manifest.Tokens, "budget", c.Manifest.Budget, "items", len(c.Manifest.Items), "omitted", len(c.Manifest.Omitted), "manifest", c.Manifest)
	return aic, nil
}

// current returns the memory session of sess, opened. An agent session
// outlives its memory sessions in ModeIdle, and for a run (run true) in
// every mode: when the one it was in has ended (idle, or by EndSession),
// the next begins, kept in the agent session's state, so that no run's
// turn is dropped. The next is named after the one that ended
// (nextSessionID), so that every process holding the agent session —
// several instances on one store, each with its own copy of it — goes on
// in the same one: one that has not seen the last ends walks the chain
// in the store, one read per ended session.
func (p *MemoryProvider) current(ctx context.Context, sess *agent.Session, userID string, run bool) (string, *liveSession, error) {
	next := run || p.cfg.Mode == ModeIdle
	id := p.sessionID(sess)
	ls, err := p.open(ctx, userID, id)
	if err == nil && next && ls.ks.Completed() {
		err = keeper.ErrSessionCompleted
	}
	for steps := 0; errors.Is(err, keeper.ErrSessionCompleted) && next; steps++ {
		if steps == maxSessionChain {
			return "", nil, fmt.Errorf("provider: agent session %s: more than %d ended memory sessions after %s", sess.ID(), maxSessionChain, p.sessionID(sess))
		}
		id = nextSessionID(sess.ID(), id)
		if err := sess.SetState(stateRunSession, id); err != nil {
			return "", nil, err
		}
		ls, err = p.open(ctx, userID, id)
	}
	if err != nil {
		return "", nil, fmt.Errorf("provider: open memory session %s: %w", id, err)
	}
	return id, ls, nil
}

// maxSessionChain bounds the ended memory sessions current walks past.
const maxSessionChain = 10000

// runSessionID names the memory session of one run of a ModePerRun agent
// session: the agent session's id and a random suffix.
func runSessionID(base string) string { return suffixed(base, agent.NewID()[:12]) }

// nextSessionID names the memory session of agent session base that
// follows the ended one prev: base and a suffix derived from prev, the
// same in every process.
func nextSessionID(base, prev string) string {
	sum := sha256.Sum256([]byte(prev))
	return suffixed(base, hex.EncodeToString(sum[:6]))
}

// suffixed is base, "-" and suffix, base hashed when it is too long to
// take the suffix and stay a valid id.
func suffixed(base, suffix string) string {
	suffix = "-" + suffix
	if len(base)+len(suffix) > store.MaxIDBytes {
		sum := sha256.Sum256([]byte(base))
		base = "run-" + hex.EncodeToString(sum[:16])
	}
	return base + suffix
}

// retrievalInstructions tells the model about the retrieve_user_facts tool.
const retrievalInstructions = "When the answer may depend on something the user told you in an earlier conversation, call " + retrieval.ToolName + " before answering."

// autoRetrieve is auto mode: it searches memory for the run's latest user
// message and returns the fenced block of memories to inject with their
// manifest items. Memories already in the context (interactions whose
// messages are all active turns) are left out.
func (p *MemoryProvider) autoRetrieve(ctx context.Context, userID string, input []agent.Message, c keeper.RunMemory) (string, []keeper.ManifestItem) {
	var message string
	for i := len(input) - 1; i >= 0; i-- {
		if input[i].Role == agent.RoleUser && input[i].Source == "" {
			message = input[i].Text
			break
		}
	}
	if message == "" {
		return "", nil
	}
	active := map[string]bool{}
	var recent []prompts.Turn
	for _, t := range c.Turns {
		for _, m := range t.Messages {
			active[m.ID] = true
			recent = append(recent, prompts.Turn{Role: m.Role, Text: m.Content})
		}
	}
	_, found := p.retriever.Auto(ctx, userID, recent, message)
	var keep []retrieval.Memory
	var items []keeper.ManifestItem
	for _, m := range found {
		if len(m.TurnIDs) > 0 && !slices.ContainsFunc(m.TurnIDs, func(id string) bool { return !active[id] }) {
			continue
		}
		keep = append(keep, m)
		items = append(items, keeper.ManifestItem{Kind: "retrieved_" + string(m.Kind), ID: m.ID, Time: m.Time})
	}
	return retrieval.AutoBlock(keep), items
}

// Invoked implements agent.ContextProvider: it stores the run as one turn —
// the user's input and the assistant's answer, with tool calls and results
// in the turn's metadata — durably, before returning, then queues any
// pruning. A failed run stores nothing, as the agent's session records
// nothing of it: a retry of the same input is not remembered twice.
//
// The write does not depend on the caller's context: once the model has
// answered, a cancelled or expired ctx no longer loses the turn. It is
// bounded by Config.WriteTimeout instead.
func (p *MemoryProvider) Invoked(ctx context.Context, ic *agent.InvokedContext) error {
	return p.storeTurn(ctx, ic, true)
}

// storeTurn is Invoked, for a run, and Record; a turn recorded on an ended
// memory session goes to the next only in ModeIdle.
func (p *MemoryProvider) storeTurn(ctx context.Context, ic *agent.InvokedContext, run bool) error {
	if ic.Err != nil {
		p.log.DebugContext(ctx, "memory: failed run not stored", "session", ic.Session.ID(), "err", ic.Err)
		return nil
	}
	userID, err := p.userOf(ic.Session)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.cfg.WriteTimeout)
	defer cancel()
	id, ls, err := p.current(ctx, ic.Session, userID, run)
	if err != nil {
		return err
	}
	turn := turnOf(ic, p.cfg.Now())
	if len(turn.Messages) > 0 {
		_, err := ls.ks.AddTurn(ctx, turn)
		if errors.Is(err, keeper.ErrSessionCompleted) && (run || p.cfg.Mode == ModeIdle) {
			// The session ended (idled out, or EndSession) while the run
			// was going: the turn goes to the next one.
			if id, ls, err = p.current(ctx, ic.Session, userID, run); err == nil {
				_, err = ls.ks.AddTurn(ctx, turn)
			}
		}
		if err != nil {
			return fmt.Errorf("provider: store turn: %w", err)
		}
	}
	p.afterTurn(ctx, userID, id, ls)
	return nil
}

// afterTurn follows a turn stored in memory session id of userID: it
// queues the session's pruning when due, and its end (ModePerRun) or its
// idle timer (ModeIdle).
func (p *MemoryProvider) afterTurn(ctx context.Context, userID, id string, ls *liveSession) {
	if ls.ks.NeedsPrune() {
		p.schedulePrune(ctx, ls.ks)
	}
	switch p.cfg.Mode {
	case ModePerRun:
		p.scheduleEnd(ctx, userID, id)
	case ModeIdle:
		p.touch(userID, id, ls)
	}
}

// touch (re)arms the idle timer of a ModeIdle session.
func (p *MemoryProvider) touch(userID, id string, ls *liveSession) {
	if p.cfg.Mode != ModeIdle {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if ls.timer == nil {
		ls.timer = time.AfterFunc(p.cfg.IdleTimeout, func() { p.scheduleTend(context.Background(), userID, id) })
		return
	}
	ls.timer.Reset(p.cfg.IdleTimeout)
}

// toolTrace is what a turn's metadata keeps of a tool call.
type toolTrace struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Result    string          `json:"result,omitempty"`
}

// Bounds of a tool call kept in a turn's metadata: a result is cut, and
// arguments over their bound are kept as a JSON string holding their cut
// text (still valid JSON), both with a marker naming the original size.
const (
	maxToolResult    = 2000
	maxToolArguments = 4000
)

// turnOf builds the turn of a run: the conversation messages of the input
// (never what a provider injected) and the assistant messages with text;
// tool calls and their results go to metadata.
func turnOf(ic *agent.InvokedContext, now time.Time) store.Turn {
	t := store.Turn{Time: now.UTC()}
	for _, m := range ic.Request {
		if m.Source != "" || (m.Role != agent.RoleUser && m.Role != agent.RoleAssistant) || strings.TrimSpace(m.Text) == "" {
			continue
		}
		t.Messages = append(t.Messages, store.TurnMessage{ID: m.ID, Role: string(m.Role), Name: m.Name, Content: m.Text})
		if !m.CreatedAt.IsZero() {
			t.Time = m.CreatedAt.UTC()
		}
	}
	var tools []toolTrace
	byCall := map[string]int{}
	for _, m := range ic.Response {
		switch m.Role {
		case agent.RoleAssistant:
			for _, tc := range m.ToolCalls {
				byCall[tc.ID] = len(tools)
				args := tc.Arguments
				if len(args) > maxToolArguments {
					cut, _ := keeper.Cut(string(args), maxToolArguments)
					args, _ = json.Marshal(cut)
				}
				tools = append(tools, toolTrace{Name: tc.Name, Arguments: args})
			}
			if strings.TrimSpace(m.Text) != "" {
				t.Messages = append(t.Messages, store.TurnMessage{ID: m.ID, Role: string(m.Role), Name: m.Name, Content: m.Text})
			}
		case agent.RoleTool:
			if i, ok := byCall[m.ToolCallID]; ok {
				tools[i].Result, _ = keeper.Cut(m.Text, maxToolResult)
			}
		}
	}
	if len(tools) > 0 {
		b, _ := json.Marshal(tools) // always valid: Arguments is valid JSON by contract
		t.Metadata = map[string]string{"tools": string(b)}
	}
	return t
}

// Record stores msgs as one turn of the memory session of sess, without a
// model run: for importing an existing conversation, or for turns an
// application handles itself. Messages with role user or assistant are
// kept (Name is kept as the speaker); their CreatedAt, when set, dates the
// turn. Like Invoked, it returns once the turn is durable and queues any
// pruning. Unlike a run, it does not go on to a new memory session when
// the one of sess has ended (except in ModeIdle): it fails with
// keeper.ErrSessionCompleted, for the caller to choose a new session.
func (p *MemoryProvider) Record(ctx context.Context, sess *agent.Session, msgs ...agent.Message) error {
	msgs, err := recordable(msgs)
	if err != nil {
		return fmt.Errorf("provider: record: %w", err)
	}
	return p.storeTurn(ctx, &agent.InvokedContext{Session: sess, Request: msgs}, false)
}

// recordable checks the messages of a turn Record stores, and gives each
// without an ID one.
func recordable(msgs []agent.Message) ([]agent.Message, error) {
	if len(msgs) == 0 {
		return nil, errors.New("no messages")
	}
	msgs = slices.Clone(msgs)
	for i, m := range msgs {
		if m.Role != agent.RoleUser && m.Role != agent.RoleAssistant {
			return nil, fmt.Errorf("message %d: role %q, want user or assistant", i, m.Role)
		}
		if m.ID == "" {
			msgs[i].ID = agent.NewID()
		}
	}
	return msgs, nil
}

// Turn returns the turn Record would store for msgs in the memory
// session of sess, for a caller that stores it itself, in one
// transaction with writes of its own (store.RecordWrite.Append, which
// numbers it). Once the turn is stored, Recorded tells p. The messages
// are checked as Record checks them.
func (p *MemoryProvider) Turn(sess *agent.Session, msgs ...agent.Message) (store.Turn, error) {
	msgs, err := recordable(msgs)
	if err != nil {
		return store.Turn{}, fmt.Errorf("provider: turn: %w", err)
	}
	userID, err := p.userOf(sess)
	if err != nil {
		return store.Turn{}, err
	}
	t := turnOf(&agent.InvokedContext{Session: sess, Request: msgs}, p.cfg.Now())
	return p.keeper.NewTurn(userID, p.sessionID(sess), t), nil
}

// Recorded tells p of turns of sess that the caller stored itself (Turn),
// in order, with the numbers the store gave them: p opens the memory
// session if it has not, keeps the turns in its context and queues any
// pruning, as Record does once it has stored a turn. The turns are stored
// whatever it returns; on an error (the session could not be opened) the
// session's next use reads them.
func (p *MemoryProvider) Recorded(ctx context.Context, sess *agent.Session, turns ...store.Turn) error {
	userID, err := p.userOf(sess)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.cfg.WriteTimeout)
	defer cancel()
	id, ls, err := p.current(ctx, sess, userID, false)
	if err != nil {
		return err
	}
	for _, t := range turns {
		ls.ks.Stored(ctx, t)
	}
	p.afterTurn(ctx, userID, id, ls)
	return nil
}
