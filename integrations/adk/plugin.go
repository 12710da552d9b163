package adk

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	amagent "github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/keeper"
)

// PluginName is the name of the plugin Plugin returns.
const PluginName = "agentmemory"

// run is what the plugin keeps of one invocation between its callbacks.
type run struct {
	// sess is the memory session the invocation's memory came from; nil
	// when memory failed before the invocation.
	sess *amagent.Session
	// aic is the memory to inject; nil when memory failed, and the model
	// then gets ADK's own history.
	aic   *amagent.AIContext
	tools []tool.Tool
	// input is the text of the user's message, to find where the current
	// turn starts in a request's contents.
	input string
}

// Plugin returns the ADK plugin that gives every invocation of a runner
// the user's memory (pass it in runner.Config.PluginConfig.Plugins):
//
//   - Before the invocation (BeforeRunCallback) it opens the ADK session's
//     open memory session (the user's, with the session's id, or its
//     successor once that has ended) and renders its memory, as
//     provider.MemoryProvider.Invoking does.
//   - Before each model call of the invocation (BeforeModelCallback) it
//     appends the memory instructions and the fenced memory block to the
//     system instruction; replaces the contents of earlier invocations
//     (ADK's session history) with the active turns, within the token
//     budget; and adds the retrieve_user_facts tool when the provider's
//     retrieval mode offers it and the agent does not have it already.
//   - After the invocation (AfterRunCallback) it stores the invocation as
//     one turn, as Invoked does, with the events' ids: AddSessionToMemory
//     of the same session later finds it stored.
//
// When memory fails the failure is logged and the model call goes ahead
// without it, with ADK's own history.
func (m *Memory) Plugin() (*plugin.Plugin, error) {
	p, err := plugin.New(plugin.Config{
		Name:                PluginName,
		BeforeRunCallback:   m.beforeRun,
		BeforeModelCallback: m.beforeModel,
		AfterRunCallback:    m.afterRun,
	})
	if err != nil {
		return nil, fmt.Errorf("adk: plugin: %w", err)
	}
	return p, nil
}

func (m *Memory) beforeRun(ictx agent.InvocationContext) (*genai.Content, error) {
	s := ictx.Session()
	if s == nil {
		return nil, nil
	}
	if err := checkIDs(s.UserID(), s.ID()); err != nil {
		m.log.WarnContext(ictx, "memory: invocation runs without memory", "user", s.UserID(), "session", s.ID(), "err", err)
		return nil, nil
	}
	r := &run{}
	if u := ictx.UserContent(); u != nil {
		r.input = eventText(u)
	}
	var input []amagent.Message
	if r.input != "" {
		input = []amagent.Message{{ID: userEventID(s, ictx.InvocationID()), Role: amagent.RoleUser, Text: r.input}}
	}
	sess, err := m.openSession(ictx, s.UserID(), s.ID())
	var aic *amagent.AIContext
	if err == nil {
		r.sess = sess
		aic, err = m.p.Invoking(ictx, &amagent.InvokingContext{Session: sess, Messages: input})
	}
	if errors.Is(err, keeper.ErrSessionCompleted) { // ended meanwhile: the next memory session takes over
		if sess, err = m.openSession(ictx, s.UserID(), s.ID()); err == nil {
			r.sess = sess
			aic, err = m.p.Invoking(ictx, &amagent.InvokingContext{Session: sess, Messages: input})
		}
	}
	if err != nil {
		m.log.WarnContext(ictx, "memory: context not injected; the invocation goes on with ADK's history", "user", s.UserID(), "session", s.ID(), "err", err)
	} else {
		r.aic = aic
		for _, t := range aic.Tools {
			at, err := adkTool(t)
			if err != nil {
				m.log.WarnContext(ictx, "memory: tool not offered", "tool", t.Name(), "err", err)
				continue
			}
			r.tools = append(r.tools, at)
		}
	}
	m.mu.Lock()
	m.runs[ictx.InvocationID()] = r
	m.mu.Unlock()
	return nil, nil
}

// userEventID returns the id of the event holding the user's message of
// an invocation, or "" when the session has none.
func userEventID(s session.Session, invocationID string) string {
	events := s.Events()
	if events == nil {
		return ""
	}
	for i := events.Len() - 1; i >= 0; i-- {
		if ev := events.At(i); ev != nil && ev.InvocationID == invocationID && ev.Author == "user" {
			return ev.ID
		}
	}
	return ""
}

func (m *Memory) beforeModel(cctx agent.CallbackContext, req *model.LLMRequest) (*model.LLMResponse, error) {
	m.mu.Lock()
	r := m.runs[cctx.InvocationID()]
	m.mu.Unlock()
	if r == nil || r.aic == nil || req == nil {
		return nil, nil
	}
	inject(req, r)
	return nil, nil
}

// inject puts an invocation's memory into one model request.
func inject(req *model.LLMRequest, r *run) {
	if req.Config == nil {
		req.Config = &genai.GenerateContentConfig{}
	}
	var system []*genai.Part
	if s := strings.TrimSpace(r.aic.Instructions); s != "" {
		system = append(system, genai.NewPartFromText(s))
	}
	var turns []*genai.Content
	for _, msg := range r.aic.Messages {
		switch msg.Role {
		case amagent.RoleSystem:
			system = append(system, genai.NewPartFromText(msg.Text))
		case amagent.RoleUser:
			turns = append(turns, genai.NewContentFromText(msg.Text, genai.RoleUser))
		case amagent.RoleAssistant:
			turns = append(turns, genai.NewContentFromText(msg.Text, genai.RoleModel))
		}
	}
	if len(system) > 0 {
		if req.Config.SystemInstruction == nil {
			req.Config.SystemInstruction = &genai.Content{Role: genai.RoleUser}
		}
		req.Config.SystemInstruction.Parts = append(req.Config.SystemInstruction.Parts, system...)
	}
	// The active turns stand in for ADK's history, which would repeat
	// them without the budget. When the current turn cannot be found the
	// history stays, and the turns are left out rather than sent twice.
	if start, ok := currentTurn(req.Contents, r.input); ok {
		req.Contents = append(turns, req.Contents[start:]...)
	}
	for _, t := range r.tools {
		addTool(req, t)
	}
}

// currentTurn returns the index of the content holding the user's message
// that started the invocation: the last user content with that text.
func currentTurn(contents []*genai.Content, input string) (int, bool) {
	if input == "" {
		return 0, false
	}
	for i := len(contents) - 1; i >= 0; i-- {
		if c := contents[i]; c != nil && c.Role == genai.RoleUser && eventText(c) == input {
			return i, true
		}
	}
	return 0, false
}

// declarer is what ADK's function tools implement to be offered to a model.
type declarer interface {
	Declaration() *genai.FunctionDeclaration
}

// addTool offers t in req, unless a tool of its name is there already.
func addTool(req *model.LLMRequest, t tool.Tool) {
	if _, ok := req.Tools[t.Name()]; ok {
		return
	}
	d, ok := t.(declarer)
	if !ok || d.Declaration() == nil {
		return
	}
	if req.Tools == nil {
		req.Tools = map[string]any{}
	}
	req.Tools[t.Name()] = t
	for _, gt := range req.Config.Tools {
		if gt != nil && gt.FunctionDeclarations != nil {
			gt.FunctionDeclarations = append(gt.FunctionDeclarations, d.Declaration())
			return
		}
	}
	req.Config.Tools = append(req.Config.Tools, &genai.Tool{FunctionDeclarations: []*genai.FunctionDeclaration{d.Declaration()}})
}

func (m *Memory) afterRun(ictx agent.InvocationContext) {
	m.mu.Lock()
	r := m.runs[ictx.InvocationID()]
	delete(m.runs, ictx.InvocationID())
	m.mu.Unlock()
	if r == nil {
		return // beforeRun found the user or session id unusable, and said so
	}
	s := ictx.Session()
	if s == nil {
		return
	}
	runs := invocations(s.Events(), ictx.InvocationID())
	if len(runs) == 0 {
		m.log.DebugContext(ictx, "memory: invocation without an answer not stored", "session", s.ID(), "invocation", ictx.InvocationID())
		return
	}
	var err error
	sess := r.sess
	if sess == nil { // memory failed before the invocation; it may be back
		sess, err = m.openSession(ictx, s.UserID(), s.ID())
	}
	if err == nil {
		err = m.p.Invoked(ictx, runs[0].invoked(sess))
	}
	if errors.Is(err, keeper.ErrSessionCompleted) { // ended during the invocation: the next memory session takes the turn
		if sess, err = m.openSession(ictx, s.UserID(), s.ID()); err == nil {
			err = m.p.Invoked(ictx, runs[0].invoked(sess))
		}
	}
	if err != nil {
		m.log.WarnContext(ictx, "memory: turn not stored", "user", s.UserID(), "session", s.ID(), "invocation", ictx.InvocationID(), "err", err)
	}
}
