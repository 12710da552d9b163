package mcpserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmemory/agentmemory/store"
)

// addTools adds the tools, with their schemas and annotations.
func (h *handlers) addTools(s *mcp.Server, readOnly bool) error {
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	// Writes that only add, and that a repeat does not add again.
	additive := &mcp.ToolAnnotations{OpenWorldHint: ptr(false), IdempotentHint: true, DestructiveHint: ptr(false)}
	// Writes that replace or remove what was there; a repeat changes nothing more.
	destructive := &mcp.ToolAnnotations{OpenWorldHint: ptr(false), IdempotentHint: true, DestructiveHint: ptr(true)}

	query := func(p props) { bound(p["query"], 1, MaxQueryLength) }
	topK := h.mem.Retriever().Config().TopK
	err := errors.Join(
		addTool(s, &mcp.Tool{Name: "retrieve_user_facts", Annotations: ro,
			Description: "Answer a question from the user's long-term memory (past conversations, insights, session summaries). Returns the relevant facts, each with its source id and date."},
			query, h.retrieve),
		addTool(s, &mcp.Tool{Name: "search_memory", Annotations: ro,
			Description: "Search the user's long-term memory and return the matching documents, best first: conversation excerpts (interactions), insights and session summaries (session_summaries)."},
			func(p props) {
				query(p)
				p["kinds"].Items.Enum = kindNames()
				k := p["top_k"]
				k.Minimum, k.Maximum = ptr(1.0), ptr(float64(MaxTopK))
				if topK >= 1 && topK <= MaxTopK {
					k.Default = json.RawMessage(fmt.Sprint(topK))
				}
			}, h.search),
		addTool(s, &mcp.Tool{Name: "get_user_context", Annotations: ro,
			Description: "The user's long-term profile and the summaries of their most recent sessions: what a new conversation should start with."},
			nil, h.userContext),
		addTool(s, &mcp.Tool{Name: "list_insights", Annotations: ro,
			Description: "List the insights remembered about the user, newest first, with their ids, categories and confidence."},
			func(p props) { p["category"].Enum = h.categories() }, h.listInsights),
	)
	if err != nil || readOnly {
		return err
	}
	sessionOnly := func(p props) { bound(p["session_id"], 1, MaxIDLength) }
	return errors.Join(
		addTool(s, &mcp.Tool{Name: "record_turn", Annotations: additive,
			Description: "Store one exchange of a conversation in the user's memory: what the user said and what the assistant answered. " +
				"Use the same session_id for every exchange of one conversation, and give each exchange its own turn_id: " +
				"a call repeated with the same session_id and turn_id (a retry) stores nothing again. " +
				"A call without turn_id is always recorded, so a repeat without turn_id stores the exchange twice."},
			func(p props) {
				sessionOnly(p)
				bound(p["turn_id"], 1, MaxIDLength)
				bound(p["user"], 1, MaxTextLength)
				bound(p["assistant"], 0, MaxTextLength)
			}, h.record),
		addTool(s, &mcp.Tool{Name: "end_session", Annotations: additive,
			Description: "End a conversation recorded with record_turn: its last exchanges are stored, it is summarised, and what it reveals about the user is reflected into insights in the background. " +
				"Ending an ended conversation again changes nothing and returns its summary."},
			sessionOnly, h.end),
		addTool(s, &mcp.Tool{Name: "update_profile", Annotations: destructive,
			Description: "Fold the insights gathered since the last update into the user's long-term profile, which is rewritten (newer statements replace older ones). " +
				"With nothing new to fold in, the profile is left as it is."},
			nil, h.updateProfile),
		addTool(s, &mcp.Tool{Name: "forget_insight", Annotations: destructive,
			Description: "Forget one insight about the user (by the id list_insights or search_memory gave), for good: it is deleted, insights merged from it are deleted with it, and the profile is rebuilt without it, before the call returns. " +
				"The conversation it came from stays unless include_conversation is true, which forgets those sessions too. The profile's id deletes the profile. " +
				"Returns the receipt: what was deleted and rewritten, and the deletion-log record (which keeps ids and counts, never content)."},
			func(p props) { bound(p["insight_id"], 1, MaxIDLength) }, h.forget),
		addTool(s, &mcp.Tool{Name: "forget_session", Annotations: destructive,
			Description: "Forget one conversation of the user (a session id from search_memory, get_user_context or record_turn), for good: its exchanges, its summary, its stored excerpts and the insights drawn from it alone are deleted, and the profile is rebuilt without them, before the call returns. Returns the receipt."},
			sessionOnly, h.forgetSession),
		addTool(s, &mcp.Tool{Name: "forget_interaction", Annotations: destructive,
			Description: "Forget one stored excerpt of a conversation (an interaction id from search_memory) and the insights drawn from it alone; the profile is rebuilt without them. The session's recorded exchanges stay (forget_session removes them). Returns the receipt."},
			func(p props) { bound(p["interaction_id"], 1, MaxIDLength) }, h.forgetInteraction),
	)
}

// bound sets a string property's length bounds; min 0 leaves the minimum
// out.
func bound(p *jsonschema.Schema, minLen, maxLen int) {
	if minLen > 0 {
		p.MinLength = ptr(minLen)
	}
	p.MaxLength = ptr(maxLen)
}

func kindNames() []any {
	out := make([]any, len(store.Kinds))
	for i, k := range store.Kinds {
		out[i] = string(k)
	}
	return out
}

// categories are the insight categories reflection produces.
func (h *handlers) categories() []any {
	var out []any
	for _, c := range h.mem.Reflector().Config().Categories {
		if !slices.Contains(out, any(c.Name)) {
			out = append(out, c.Name)
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }
