package store

import (
	"context"
	"time"
)

// Store is the portable contract of a memory backend: every kind of
// document it keeps, and its lifetime. A component that needs only some
// kinds takes the interfaces below, or a narrower one of its own. The
// deletion log is not part of it: a backend that keeps one also
// implements DeletionLog (sqlite, cosmos and mem all do).
//
// Every method takes ctx and the user id first, fails with ErrInvalid for an
// empty or malformed user id, and touches only that user's documents: an id
// belonging to another user is simply not found. Documents passed in must
// have UserID equal to the user id argument or empty (it is then filled in).
// The store keeps no reference to a document passed in, and documents
// returned are the caller's to modify. Every call after Close fails with
// ErrClosed.
//
// Implementations are safe for concurrent use.
type Store interface {
	Interactions
	Insights
	Sessions
	Turns
	UserStates
	Deleter

	// As lets a caller reach the backend's own client for what the portable
	// API does not cover: i must be a pointer to a backend-documented type.
	// It reports whether it set *i.
	As(i any) bool
	// Close releases the backend's resources. Calls after Close fail with
	// ErrClosed.
	Close() error
}

// Interactions keeps a user's interactions (KindInteraction). Writes fail
// with ErrInvalid for a document that breaks the shared rules (a malformed
// id, a turn range that runs backwards, a vector of the wrong dimension, an
// encoding over MaxDocumentBytes); every call follows Store's rules on user
// ids and ErrClosed.
type Interactions interface {
	// PutInteraction inserts or replaces the interaction with doc.ID.
	PutInteraction(ctx context.Context, userID string, doc *Interaction) error
	// GetInteraction returns the interaction with the given id, or ErrNotFound.
	GetInteraction(ctx context.Context, userID, id string) (*Interaction, error)
	// ListInteractions returns the user's interactions matching f, oldest
	// first (by Timestamp, then FirstTurn, then ID).
	ListInteractions(ctx context.Context, userID string, f InteractionFilter) ([]*Interaction, error)
	// SearchInteractions ranks the user's interactions for q. Full text
	// covers content, summary, mentioned topics and entities; vector fields
	// default to content_vector and summary_vector. A request that breaks
	// SearchRequest's rules is ErrInvalid.
	SearchInteractions(ctx context.Context, userID string, q SearchRequest) ([]Hit[*Interaction], error)
}

// Insights keeps a user's insights (KindInsight): session insights and the
// long-term profile, soft-deleted by SupersedeInsight. Writes fail with
// ErrInvalid for a document that breaks the shared rules (an unknown
// insight type, a profile not under LongTermID, a confidence outside
// [0, 1], a vector of the wrong dimension, an encoding over
// MaxDocumentBytes); every call follows Store's rules on user ids and
// ErrClosed.
type Insights interface {
	// PutInsight inserts or replaces the insight with doc.ID. A missing
	// ContentHash is computed from InsightText.
	PutInsight(ctx context.Context, userID string, doc *Insight) error
	// GetInsight returns the insight with the given id, or ErrNotFound when
	// it does not exist or is superseded.
	GetInsight(ctx context.Context, userID, id string) (*Insight, error)
	// ListInsights returns the user's insights matching f, newest first (by
	// CreatedAt, then ID). Superseded insights are included only with
	// f.IncludeSuperseded (the audit read).
	ListInsights(ctx context.Context, userID string, f InsightFilter) ([]*Insight, error)
	// SearchInsights ranks the user's active insights for q. Full text
	// covers insight_text; the vector field is insight_vector. A request
	// that breaks SearchRequest's rules is ErrInvalid.
	SearchInsights(ctx context.Context, userID string, q SearchRequest) ([]Hit[*Insight], error)
	// FindInsightByHash returns the active insight whose ContentHash is
	// hash (the most recent if several), or ErrNotFound.
	FindInsightByHash(ctx context.Context, userID, hash string) (*Insight, error)
	// SupersedeInsight soft-deletes the insight with the given id. It fails
	// with ErrNotFound for an unknown id, ErrInvalid for a bad Supersession,
	// and ErrConflict when the insight is already superseded differently;
	// repeating the same supersession (same By and Reason, whatever At)
	// succeeds and keeps the first SupersededAt (idempotent retry).
	SupersedeInsight(ctx context.Context, userID, id string, s Supersession) error
}

// Sessions keeps a user's session documents (KindSessionSummary): the live
// state of an active session and the summary of a completed one, written
// with ETag concurrency. Writes fail with ErrInvalid for a document that
// breaks the shared rules (an unknown status, the id UserStateID, a vector
// of the wrong dimension, an encoding over MaxDocumentBytes) and with
// ErrConflict when the ETag does not match; every call follows Store's
// rules on user ids and ErrClosed.
type Sessions interface {
	// PutSession writes a session document. With an empty doc.ETag it
	// inserts or replaces unconditionally; with CreateOnly it inserts only
	// if no document has that id, and fails with ErrConflict otherwise;
	// with any other ETag it succeeds only if the stored document has that
	// ETag, and fails with ErrConflict if it has another or no longer
	// exists. On success doc.ETag holds the new ETag.
	PutSession(ctx context.Context, userID string, doc *Session) error
	// GetSession returns the session document with its ETag, or ErrNotFound.
	GetSession(ctx context.Context, userID, sessionID string) (*Session, error)
	// ListSessions returns the user's sessions matching f, most recent
	// first (by StartTime, then ID).
	ListSessions(ctx context.Context, userID string, f SessionFilter) ([]*Session, error)
	// SearchSessions ranks the user's session summaries for q. Full text
	// covers summary and key topics; the vector field is summary_vector. A
	// request that breaks SearchRequest's rules is ErrInvalid.
	SearchSessions(ctx context.Context, userID string, q SearchRequest) ([]Hit[*Session], error)
}

// Turns keeps the turn records of a user's sessions, numbered in order
// and never rewritten (KindTurn names them where a kind is needed). Every
// call follows Store's rules on user ids and ErrClosed.
type Turns interface {
	// AppendTurn stores t as the next turn of session t.SessionID: t.Seq
	// becomes one more than the session's last stored turn, or t.Seq when
	// that is larger (a caller that knows the last number passes it plus
	// one, which some backends use to read less). If the session already
	// holds a turn with t.ID, nothing is written and t.Seq is set to that
	// turn's number: a retried append is a no-op. Concurrent appends to
	// one session all succeed, with distinct numbers. A turn needs no
	// session document; it fails with ErrInvalid for a missing ID or
	// SessionID, no messages, or an encoding over MaxDocumentBytes.
	AppendTurn(ctx context.Context, userID string, t *Turn) error
	// ListTurns returns the turns of one session numbered from on, in
	// order (an empty slice when there are none).
	ListTurns(ctx context.Context, userID, sessionID string, from int) ([]*Turn, error)
}

// UserStates keeps each user's one coordination document (UserState),
// written with the same ETag concurrency as Sessions. UpdateUserState is
// the read-change-write loop over it. Every call follows Store's rules on
// user ids and ErrClosed.
type UserStates interface {
	// GetUserState returns the user's coordination document with its ETag,
	// or ErrNotFound.
	GetUserState(ctx context.Context, userID string) (*UserState, error)
	// PutUserState writes the user's coordination document, under the
	// same ETag rules as PutSession: unconditionally with an empty ETag,
	// CreateOnly, or only over the stored ETag (ErrConflict otherwise). It
	// fails with ErrInvalid for a malformed lease owner, a negative
	// counter or an encoding over MaxDocumentBytes.
	PutUserState(ctx context.Context, userID string, doc *UserState) error
}

// Deleter removes a user's documents for good: one document, one session,
// or the whole user. Nothing is soft-deleted (see SupersedeInsight for
// that). Every call follows Store's rules on user ids and ErrClosed.
type Deleter interface {
	// DeleteDocument removes one document for good (no soft delete), or
	// fails with ErrNotFound. It fails with ErrInvalid for a kind that is
	// not one of Kinds.
	DeleteDocument(ctx context.Context, userID string, kind Kind, id string) error
	// DeleteSession removes the session document and every turn record of
	// the session, for good, and returns how many turns it removed. It
	// fails with ErrNotFound when the user has neither a session document
	// nor turns under sessionID, and with ErrInvalid for a malformed
	// sessionID or UserStateID (the user state is not a session). The
	// session's interactions and insights are separate documents
	// (DeleteDocument removes them).
	DeleteSession(ctx context.Context, userID, sessionID string) (turns int, err error)
	// DeleteUser removes every document of the user in every kind, every
	// turn and the user state: the right to be forgotten. Deleting a user
	// with no documents succeeds. It leaves the deletion log (see
	// DeletionLog), which outlives the users it names. An error wrapping
	// ErrNotScrubbed means the deletion was made but its old content is
	// still in the store's files.
	DeleteUser(ctx context.Context, userID string) error
}

// CreateOnly, as Session.ETag, makes PutSession an insert that
// fails with ErrConflict when the session already exists (HTTP's
// If-None-Match: *), so two processes starting the same session cannot
// overwrite each other.
const CreateOnly = "*"

// InteractionFilter selects interactions for ListInteractions. The zero
// value selects all of the user's interactions.
type InteractionFilter struct {
	// SessionID, if set, keeps one session's interactions.
	SessionID string
	// MetadataPending, if true, keeps only documents awaiting metadata.
	MetadataPending bool
	// Since and Until, if non-zero, bound Timestamp: Since <= t < Until.
	Since, Until time.Time
	// Limit caps the number returned, keeping the most recent ones (still
	// returned oldest first); zero means no limit.
	Limit int
}

// InsightFilter selects insights for ListInsights. The zero value selects
// all active insights of the user.
type InsightFilter struct {
	// Type, if set, keeps one insight type.
	Type InsightType
	// Category, if set, keeps one category.
	Category string
	// SessionID, if set, keeps insights whose SessionIDs contain it.
	SessionID string
	// Processed, if non-nil, keeps insights with that Processed value.
	Processed *bool
	// Since and Until, if non-zero, bound CreatedAt: Since <= t < Until.
	Since, Until time.Time
	// IncludeSuperseded makes this an audit read: soft-deleted insights are
	// returned too.
	IncludeSuperseded bool
	// Limit caps the number returned (the newest); zero means no limit.
	Limit int
}

// SessionFilter selects sessions for ListSessions. The zero value selects
// all of the user's sessions.
type SessionFilter struct {
	// Status, if set, keeps sessions with that status.
	Status SessionStatus
	// ReflectionStatus, if set, keeps sessions with that reflection status.
	ReflectionStatus ReflectionStatus
	// Since and Until, if non-zero, bound StartTime: Since <= t < Until.
	Since, Until time.Time
	// Limit caps the number returned (the most recent); zero means no limit.
	Limit int
}

// Supersession describes a soft delete.
type Supersession struct {
	// By is the id of the insight that replaces this one; empty only for
	// ReasonForgotten.
	By string
	// Reason is why the insight was superseded.
	Reason SupersedeReason
	// At is when; zero means now.
	At time.Time
}

// VectorField names a vector property searched by a SearchRequest.
type VectorField string

// Vector fields.
const (
	FieldContentVector VectorField = "content_vector"
	FieldSummaryVector VectorField = "summary_vector"
	FieldInsightVector VectorField = "insight_vector"
)

// DefaultTopK is the number of hits returned when SearchRequest.TopK is zero.
const DefaultTopK = 5

// RRFK is the Reciprocal Rank Fusion constant.
const RRFK = 60

// SearchRequest asks for the best documents of one kind.
//
// With Vector set, each of VectorFields is a ranked leg by cosine
// similarity, keeping only documents with similarity >= MinSimilarity.
// With Text set, full text is a ranked leg by BM25. With several legs the
// result is fused with Reciprocal Rank Fusion (k = RRFK); with one, it is
// that leg's order. A request with neither Text nor Vector is ErrInvalid.
type SearchRequest struct {
	// Text is the user's query text; backends sanitise it, so any string is
	// safe. Words are OR-ed: a document matching any word is a candidate.
	Text string
	// Vector is the query embedding; its dimension must match the store's.
	Vector []float32
	// VectorFields are the vector legs; empty means the kind's defaults. A
	// field the kind does not have is ErrInvalid.
	VectorFields []VectorField
	// TopK is the number of hits; zero means DefaultTopK.
	TopK int
	// MinSimilarity drops vector-leg candidates below this cosine
	// similarity; -1 keeps them all. An absolute cosine means different
	// things for different embedding models (unrelated texts sit near 0.2
	// for text-embedding-3-small, near 0.7 for ada-002): package retrieval
	// passes -1 unless configured otherwise, and weighs vector matches by
	// their relevance relative to the query's own similarities.
	MinSimilarity float64
	// SessionID keeps documents of one session (interactions: session_id;
	// insights: session_ids contains it; sessions: the id).
	SessionID string
	// InsightType and Category filter insights (ignored for other kinds).
	InsightType InsightType
	Category    string
	// Since and Until, if non-zero, bound the kind's time field
	// (interactions: timestamp; insights: created_at; sessions:
	// start_time): Since <= t < Until.
	Since, Until time.Time
}

// Hit is one search result.
type Hit[T any] struct {
	Doc T
	// Score orders the hits: the RRF score when legs were fused, else the
	// single leg's score (cosine similarity or BM25, higher is better).
	Score float64
	// Similarity is the best cosine similarity over the vector legs, or 0
	// when the document came from full text alone.
	Similarity float64
	// TextScore is the document's BM25 score (higher is better), or 0.
	TextScore float64
}
