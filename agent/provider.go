package agent

import (
	"context"
	"fmt"
)

// ContextProvider adds context to an agent's runs and observes their results,
// like Agent Framework's AIContextProvider.
//
// Errors from either hook are logged by the agent and otherwise ignored: the
// run goes on without that provider's contribution.
type ContextProvider interface {
	// Invoking runs once at the start of each run, before the first model
	// call; what it returns is merged into every model call of the run.
	Invoking(ctx context.Context, ic *InvokingContext) (*AIContext, error)
	// Invoked runs after the run, with both sides of the turn or the run's
	// error.
	Invoked(ctx context.Context, ic *InvokedContext) error
}

// InvokingContext is what a provider sees before a run.
type InvokingContext struct {
	Agent   *Agent
	Session *Session
	// Messages is the run's new input.
	Messages []Message
}

// InvokedContext is what a provider sees after a run.
type InvokedContext struct {
	Agent   *Agent
	Session *Session
	// Request is the run's new input (not the history, not injected context).
	Request []Message
	// Context holds the messages every provider injected, each with its Source.
	Context []Message
	// Response holds the messages the run produced: assistant messages, and
	// tool messages answering their calls. Empty when Err is set before the
	// model answered.
	Response []Message
	// Err is the run's error, or nil.
	Err error
}

// AIContext is a provider's contribution to a run.
type AIContext struct {
	// Instructions are appended to the agent's instructions.
	Instructions string
	// Messages are placed after the system message, before the history.
	Messages []Message
	// Tools are offered to the model in addition to the agent's own.
	Tools []Tool
}

// SourceIdentifier is implemented by a provider that names itself. The name
// is stamped on the messages it injects (Message.Source); a provider
// without it is named by its Go type.
type SourceIdentifier interface {
	SourceID() string
}

// HistoryKeeper is implemented by a provider that supplies the
// conversation's recent history itself (a memory provider injecting its
// active turns, say). While such a provider's Invoking succeeds, the agent
// sends none of the session's own messages to the model, so no message
// reaches it twice; if its Invoking fails, the agent falls back to the
// session history for that run. The session still records every message.
type HistoryKeeper interface {
	KeepsHistory() bool
}

func keepsHistory(p ContextProvider) bool {
	h, ok := p.(HistoryKeeper)
	return ok && h.KeepsHistory()
}

func sourceID(p ContextProvider) string {
	if s, ok := p.(SourceIdentifier); ok {
		return s.SourceID()
	}
	return fmt.Sprintf("%T", p)
}
