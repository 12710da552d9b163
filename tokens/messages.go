package tokens

import "github.com/agentmemory/agentmemory/agent"

// Per-message overheads of the chat format, after OpenAI's published
// recipe for counting chat tokens ("How to count tokens with tiktoken"):
// each message is wrapped in a few formatting tokens, a name costs one more,
// and the reply is primed with three. Other servers format differently, so
// CountMessages is an approximation, within a few tokens per message.
const (
	// TokensPerMessage wraps every message.
	TokensPerMessage = 3
	// TokensPerName is added when a message has a Name.
	TokensPerName = 1
	// TokensPerToolCall wraps every tool call of an assistant message.
	TokensPerToolCall = 3
	// TokensReplyPriming starts the assistant's reply.
	TokensReplyPriming = 3
)

// CountMessages estimates the prompt tokens of msgs as a chat request: for
// each message TokensPerMessage plus its role, text, name (plus
// TokensPerName), tool call id and tool calls (TokensPerToolCall plus name
// and arguments each), then TokensReplyPriming once. It does not count tool
// definitions. A nil c counts with Approx. Zero messages count zero.
func CountMessages(c Counter, msgs []agent.Message) int {
	if len(msgs) == 0 {
		return 0
	}
	if c == nil {
		c = Approx{}
	}
	n := TokensReplyPriming
	for _, m := range msgs {
		n += CountMessage(c, m)
	}
	return n
}

// CountMessage is CountMessages for one message, without the reply priming.
func CountMessage(c Counter, m agent.Message) int {
	if c == nil {
		c = Approx{}
	}
	n := TokensPerMessage + c.Count(string(m.Role)) + c.Count(m.Text)
	if m.Name != "" {
		n += TokensPerName + c.Count(m.Name)
	}
	if m.ToolCallID != "" {
		n += c.Count(m.ToolCallID)
	}
	for _, tc := range m.ToolCalls {
		n += TokensPerToolCall + c.Count(tc.Name) + c.Count(string(tc.Arguments))
	}
	return n
}
