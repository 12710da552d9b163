package mcpserver

import (
	"github.com/agentmemory/agentmemory/erasure"
	"github.com/agentmemory/agentmemory/provider"
)

// Tool inputs and outputs.

type queryIn struct {
	Query string `json:"query" jsonschema:"what to look for, in plain words"`
}

type factsOut struct {
	// Answer is the cited facts, or a statement that nothing was found.
	Answer string `json:"answer"`
}

type searchIn struct {
	Query string   `json:"query" jsonschema:"what to look for, in plain words"`
	Kinds []string `json:"kinds,omitempty" jsonschema:"document kinds to search: interactions, insights, session_summaries; leave out for all"`
	TopK  int      `json:"top_k,omitempty" jsonschema:"how many documents at most (1 to 50); leave out for the default"`
}

// Document is a document of the user's memory as a tool returns it.
type Document struct {
	// Kind is interactions, insights or session_summaries.
	Kind      string   `json:"kind"`
	ID        string   `json:"id"`
	SessionID string   `json:"session_id,omitempty"`
	Date      string   `json:"date"`
	Text      string   `json:"text"`
	Summary   string   `json:"summary,omitempty"`
	TurnIDs   []string `json:"turn_ids,omitempty"`
	Score     float64  `json:"score"`
}

type searchOut struct {
	Documents []Document `json:"documents"`
}

type empty struct{}

// Session is a session summary as get_user_context returns it.
type Session struct {
	ID      string `json:"id"`
	Date    string `json:"date"`
	Summary string `json:"summary"`
}

type userContextOut struct {
	// Profile is the long-term profile; empty when there is none yet.
	Profile string `json:"profile"`
	// ProfileUpdated is when the profile was last written.
	ProfileUpdated string    `json:"profile_updated,omitempty"`
	RecentSessions []Session `json:"recent_sessions"`
}

type listIn struct {
	Category string `json:"category,omitempty" jsonschema:"keep one category of insights; leave out for all"`
}

// Insight is an insight as list_insights returns it.
type Insight struct {
	ID         string   `json:"id"`
	Category   string   `json:"category,omitempty"`
	Text       string   `json:"text"`
	Confidence float64  `json:"confidence"`
	Importance string   `json:"importance,omitempty"`
	Date       string   `json:"date"`
	SessionIDs []string `json:"session_ids,omitempty"`
}

type listOut struct {
	Insights []Insight `json:"insights"`
}

type recordIn struct {
	SessionID string `json:"session_id" jsonschema:"the conversation this exchange belongs to (letters, digits, '-', '_', '.', ':'; not '/', '\\', '?' or '#')"`
	User      string `json:"user" jsonschema:"what the user said"`
	Assistant string `json:"assistant,omitempty" jsonschema:"what the assistant answered"`
	TurnID    string `json:"turn_id,omitempty" jsonschema:"the id of this exchange within its conversation: a call with the same session_id and same turn_id as an earlier one stores nothing again, whatever its text, so a retry is safe; leave out to record every call"`
}

type recordOut struct {
	// Stored reports that the exchange is in memory.
	Stored bool `json:"stored"`
	// AlreadyRecorded reports that it was there before this call (same
	// turn_id), and nothing was stored again.
	AlreadyRecorded bool `json:"already_recorded,omitempty"`
}

type sessionIn struct {
	SessionID string `json:"session_id" jsonschema:"the conversation to end, as given to record_turn"`
}

type endOut struct {
	Summary      string `json:"summary"`
	Interactions int    `json:"interactions"`
}

type profileOut struct {
	Profile string `json:"profile"`
	Folded  int    `json:"insights_folded_in"`
}

type forgetIn struct {
	InsightID           string `json:"insight_id" jsonschema:"the id of the insight to forget"`
	IncludeConversation bool   `json:"include_conversation,omitempty" jsonschema:"also forget the sessions the insight was drawn from"`
}

type forgetOut struct {
	Forgotten string `json:"forgotten"`
	// AlsoForgotten are the other insights deleted with it (merged from
	// it, or drawn from a forgotten conversation alone).
	AlsoForgotten []string `json:"also_forgotten,omitempty"`
	receiptOut
}

type forgetSessionIn struct {
	SessionID string `json:"session_id" jsonschema:"the id of the session to forget"`
}

type forgetInteractionIn struct {
	InteractionID string `json:"interaction_id" jsonschema:"the id of the interaction to forget"`
}

// receiptOut is a provider.Receipt as a tool result.
type receiptOut struct {
	// Deleted counts what was deleted by kind (turns counted one by one).
	Deleted map[string]int `json:"deleted"`
	// DeletedIDs lists the deleted ids by kind (a session's turns under
	// its session id).
	DeletedIDs map[string][]string `json:"deleted_ids"`
	// Rewritten lists derived documents made anew without what was
	// forgotten, as "kind/id".
	Rewritten []string `json:"rewritten,omitempty"`
	// LogRecord is the number of the deletion-log record of this call.
	LogRecord int64 `json:"log_record,omitempty"`
}

func receiptOf(rc *provider.Receipt) receiptOut {
	out := receiptOut{Deleted: map[string]int{}, DeletedIDs: map[string][]string{}, LogRecord: rc.LogSeq}
	for _, it := range rc.Items {
		switch it.Action {
		case erasure.Deleted:
			out.Deleted[string(it.Kind)] += max(it.Count, 1)
			out.DeletedIDs[string(it.Kind)] = append(out.DeletedIDs[string(it.Kind)], it.ID)
		case erasure.Rewritten:
			out.Rewritten = append(out.Rewritten, string(it.Kind)+"/"+it.ID)
		}
	}
	return out
}
