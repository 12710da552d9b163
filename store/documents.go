package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// Kind names a document kind; its value is the container name.
type Kind string

// The three document kinds.
const (
	KindInteraction    Kind = "interactions"
	KindInsight        Kind = "insights"
	KindSessionSummary Kind = "session_summaries"
)

// KindTurn names turn records (see Store.AppendTurn) where a kind is
// needed, as in an export. It is not one of Kinds: turns are not searched,
// nor deleted one by one, and a backend may keep them beside their session.
const KindTurn Kind = "turns"

// Kinds lists every document kind.
var Kinds = []Kind{KindInteraction, KindInsight, KindSessionSummary}

// Valid reports whether k is one of the three kinds.
func (k Kind) Valid() bool {
	switch k {
	case KindInteraction, KindInsight, KindSessionSummary:
		return true
	}
	return false
}

// Interaction is k conversation turns flattened into one document.
type Interaction struct {
	ID        string    `json:"id"`
	UserID    string    `json:"user_id"`
	SessionID string    `json:"session_id"`
	Timestamp time.Time `json:"timestamp"`
	// FirstTurn and LastTurn are the session's turn numbers (1-based,
	// inclusive) the document covers.
	FirstTurn int `json:"first_turn"`
	LastTurn  int `json:"last_turn"`
	// TurnIDs are the ids of every source message, in order: the provenance
	// of the content.
	TurnIDs []string `json:"turn_ids"`
	// Content is the flattened turns, one "role: text" line per message.
	Content       string    `json:"content"`
	ContentVector []float32 `json:"content_vector,omitempty"`
	Summary       string    `json:"summary,omitempty"`
	SummaryVector []float32 `json:"summary_vector,omitempty"`
	Metadata      Metadata  `json:"metadata"`
	// MetadataPending marks a document stored without its LLM metadata (the
	// model failed), to be completed by a later retry.
	MetadataPending bool `json:"metadata_pending,omitempty"`
	// EmbeddingModel identifies the model that produced the vectors.
	EmbeddingModel string `json:"embedding_model,omitempty"`
}

// Metadata is an interaction's LLM-extracted metadata.
type Metadata struct {
	MentionedTopics []string `json:"mentioned_topics"`
	Entities        []string `json:"entities"`
}

// InsightType distinguishes session insights from the long-term profile.
type InsightType string

// Insight types.
const (
	InsightSession  InsightType = "session"
	InsightLongTerm InsightType = "long_term"
)

// Reflection flags of a session insight.
const (
	FlagInsight   = "insight"
	FlagNoInsight = "no-insight"
)

// SupersedeReason says why an insight was soft-deleted.
type SupersedeReason string

// Supersede reasons.
const (
	ReasonDuplicate  SupersedeReason = "duplicate"
	ReasonContradict SupersedeReason = "contradict"
	ReasonForgotten  SupersedeReason = "forgotten"
)

// Valid reports whether r is a known reason.
func (r SupersedeReason) Valid() bool {
	switch r {
	case ReasonDuplicate, ReasonContradict, ReasonForgotten:
		return true
	}
	return false
}

// Insight is a session insight or the long-term profile of a user.
type Insight struct {
	ID            string      `json:"id"`
	UserID        string      `json:"user_id"`
	InsightType   InsightType `json:"insight_type"`
	SessionIDs    []string    `json:"session_ids,omitempty"`
	InsightText   string      `json:"insight_text"`
	InsightVector []float32   `json:"insight_vector,omitempty"`
	// Confidence is in [0, 1]; nil for the long-term profile.
	Confidence *float64 `json:"confidence"`
	// Importance is "low", "medium" or "high"; empty for the profile.
	Importance string `json:"importance,omitempty"`
	// Category is one of the configured insight categories (demographics,
	// financial_goals, risk_profile, current_situation, concern, preference).
	Category string `json:"category,omitempty"`
	// ReflectionFlag is FlagInsight or FlagNoInsight.
	ReflectionFlag string `json:"reflection_flag,omitempty"`
	// Processed marks a session insight folded into the long-term profile.
	Processed            bool     `json:"processed"`
	SourceInteractionIDs []string `json:"source_interaction_ids,omitempty"`
	SourceInsightIDs     []string `json:"source_insight_ids,omitempty"`
	// ContentHash is ContentHash(InsightText), for exact-duplicate lookup.
	ContentHash string    `json:"content_hash,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
	// Soft delete: a superseded insight stays stored for audit but is hidden
	// from default reads and searches.
	SupersededBy    string          `json:"superseded_by,omitempty"`
	SupersedeReason SupersedeReason `json:"supersede_reason,omitempty"`
	SupersededAt    time.Time       `json:"superseded_at,omitzero"`
	EmbeddingModel  string          `json:"embedding_model,omitempty"`
}

// Superseded reports whether the insight has been soft-deleted.
func (in *Insight) Superseded() bool { return in.SupersedeReason != "" }

// SessionStatus is the lifecycle state of a session.
type SessionStatus string

// Session statuses.
const (
	SessionActive    SessionStatus = "active"
	SessionCompleted SessionStatus = "completed"
)

// ReflectionStatus tracks session reflection.
type ReflectionStatus string

// Reflection statuses.
const (
	ReflectionPending   ReflectionStatus = "pending"
	ReflectionNoInsight ReflectionStatus = "no-insight"
	ReflectionProcessed ReflectionStatus = "processed"
)

// Session is the one document of a session. Its ID is the session id.
type Session struct {
	ID            string    `json:"id"`
	UserID        string    `json:"user_id"`
	StartTime     time.Time `json:"start_time"`
	EndTime       time.Time `json:"end_time,omitzero"`
	Summary       string    `json:"summary,omitempty"`
	SummaryVector []float32 `json:"summary_vector,omitempty"`
	KeyTopics     []string  `json:"key_topics,omitempty"`
	// SummaryPending marks a session that ended while the model failed:
	// Summary holds the cumulative summary until the model is asked again.
	SummaryPending    bool             `json:"summary_pending,omitempty"`
	ExtractedInsights []string         `json:"extracted_insights,omitempty"`
	Status            SessionStatus    `json:"status"`
	ReflectionStatus  ReflectionStatus `json:"reflection_status"`
	// ReflectedThrough is the last turn of the interactions reflection has
	// read, during the session (extraction every N turns) or at its end.
	ReflectedThrough int `json:"reflected_through,omitempty"`
	// State is the live session state, so a restart loses no turn.
	State          SessionState `json:"state"`
	UpdatedAt      time.Time    `json:"updated_at"`
	EmbeddingModel string       `json:"embedding_model,omitempty"`
	// ETag is set by the store on every read and write. PutSession with a
	// non-empty ETag succeeds only if the stored document still has it.
	ETag string `json:"_etag,omitempty"`
}

// SessionState is the part of a session not yet pruned into interactions.
type SessionState struct {
	// Turns are the turns not yet pruned, in order.
	// In documents written since turns are stored on their own (see
	// Store.AppendTurn) it is empty; a keeper migrates the turns of an
	// older document on open.
	Turns []Turn `json:"turns"`
	// CumulativeSummary summarises every pruned turn.
	CumulativeSummary string `json:"cumulative_summary,omitempty"`
	// TurnCounter is the number of the last turn added (turns are 1-based)
	// as of the document's last write; the turn records are authoritative.
	TurnCounter int `json:"turn_counter"`
	// PrunedThrough is the number of the last turn stored in an interaction.
	PrunedThrough int `json:"pruned_through"`
	// SummaryThrough is the number of the last turn the cumulative summary
	// covers; it trails PrunedThrough while the model fails. Zero in
	// documents of earlier versions, where it equalled PrunedThrough.
	SummaryThrough int `json:"summary_through,omitempty"`
}

// Turn is one exchange of a conversation: usually a user message and the
// assistant's answer. Stored on its own (Store.AppendTurn), it is the
// session's durable transcript; documents written by earlier versions
// carried turns inside SessionState instead.
type Turn struct {
	// ID identifies the turn within its session: appending a turn whose ID
	// the session already holds stores nothing (an idempotent retry).
	ID string `json:"turn_id,omitempty"`
	// UserID and SessionID place a stored turn; AppendTurn fills an empty
	// UserID.
	UserID    string `json:"user_id,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	// Seq is the turn's 1-based number in its session.
	Seq      int           `json:"seq"`
	Messages []TurnMessage `json:"messages"`
	// Time is when the turn happened.
	Time time.Time `json:"time"`
	// Metadata holds anything else worth keeping (tool calls, say).
	Metadata map[string]string `json:"metadata,omitempty"`
}

// TurnMessage is one message of a turn.
type TurnMessage struct {
	ID      string `json:"id"`
	Role    string `json:"role"`
	Name    string `json:"name,omitempty"`
	Content string `json:"content"`
	// OriginalBytes, when non-zero, is the length of the message before it
	// was cut to fit the size limits; Content then ends with a marker
	// saying so.
	OriginalBytes int `json:"original_bytes,omitempty"`
}

// ContentHash returns the hex SHA-256 (first 32 hex digits) of text
// normalised by lower-casing and collapsing whitespace, so that trivially
// different restatements of one fact share a hash.
func ContentHash(text string) string {
	norm := strings.Join(strings.Fields(strings.ToLower(text)), " ")
	sum := sha256.Sum256([]byte(norm))
	return hex.EncodeToString(sum[:16])
}

// InteractionID returns the id earlier versions gave the interaction
// covering turns first..last of a session. Prunes now use ChunkID, which
// does not depend on where a chunk ends; documents under these ids are
// still read, and replaced when a prune overlaps them.
func InteractionID(sessionID string, first, last int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d", sessionID, first, last))
	return "int-" + hex.EncodeToString(sum[:16])
}

// LongTermID returns the id of a user's long-term profile insight:
// "longterm-" and the user id, or, when that would be longer than
// MaxIDBytes (user ids of more than 246 bytes), "longterm-sha256-" and the
// hex SHA-256 of the user id, so that every valid user id has a valid
// profile id and shorter ones keep the id they always had.
func LongTermID(userID string) string {
	const prefix = "longterm-"
	if len(prefix)+len(userID) <= MaxIDBytes {
		return prefix + userID
	}
	sum := sha256.Sum256([]byte(userID))
	return prefix + "sha256-" + hex.EncodeToString(sum[:])
}

// LastWritten dates the interaction for expiry: its timestamp.
func (d *Interaction) LastWritten() time.Time { return d.Timestamp }

// LastWritten dates the insight for expiry: its last update, or its
// creation.
func (d *Insight) LastWritten() time.Time { return firstSet(d.UpdatedAt, d.CreatedAt) }

// LastWritten dates the session for expiry: its last update, or its end,
// or its start when it has neither.
func (d *Session) LastWritten() time.Time { return firstSet(d.UpdatedAt, d.EndTime, d.StartTime) }

// firstSet returns the first of ts that is not zero (time.Time.IsZero, so
// a zero instant in any location counts as unset), or the zero time.
func firstSet(ts ...time.Time) time.Time {
	for _, t := range ts {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}
