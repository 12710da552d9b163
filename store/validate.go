package store

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/agentmemory/agentmemory/internal/ident"
)

// Limits every backend enforces, so that a document valid in one is valid
// in all (Cosmos DB caps an item at 2 MB).
const (
	// MaxDocumentBytes caps a document's JSON encoding.
	MaxDocumentBytes = 1 << 20
	// MaxTopK caps SearchRequest.TopK.
	MaxTopK = 1000
	// MaxQueryBytes caps SearchRequest.Text.
	MaxQueryBytes = 8 << 10
	// MaxIDBytes caps a user, session or document id, in bytes of UTF-8.
	MaxIDBytes = ident.MaxLen
)

// CheckUserID returns an error wrapping ErrInvalid unless userID is a usable
// user id (see package ident's rule: not blank, at most 255 bytes, no
// control characters, '/', '\\', '?' or '#'), and not DeletionLogPartition.
func CheckUserID(userID string) error {
	if err := ident.CheckUser(userID); err != nil {
		return fmt.Errorf("%w: user id: %v", ErrInvalid, err)
	}
	return nil
}

// CheckID returns an error wrapping ErrInvalid unless id is a usable
// document id; what names the id in the message.
func CheckID(what, id string) error {
	if err := ident.Check(id); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInvalid, what, err)
	}
	return nil
}

// Validator checks documents and requests against the rules every backend
// shares. Dimensions is the vector length the store holds; zero accepts any
// length (a backend then compares only vectors of the query's length).
type Validator struct {
	Dimensions int
}

func (v Validator) vector(what string, vec []float32) error {
	if len(vec) == 0 {
		return nil
	}
	if v.Dimensions > 0 && len(vec) != v.Dimensions {
		return fmt.Errorf("%w: %s has %d dimensions, the store holds %d", ErrInvalid, what, len(vec), v.Dimensions)
	}
	for i, x := range vec {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("%w: %s[%d] is %v", ErrInvalid, what, i, x)
		}
	}
	return nil
}

func owner(userID string, docUserID *string) error {
	if err := CheckUserID(userID); err != nil {
		return err
	}
	switch *docUserID {
	case "":
		*docUserID = userID
	case userID:
	default:
		return fmt.Errorf("%w: document belongs to user %q, not %q", ErrInvalid, *docUserID, userID)
	}
	return nil
}

func size(what string, doc any) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInvalid, what, err)
	}
	if len(b) > MaxDocumentBytes {
		return fmt.Errorf("%w: %s is %d bytes encoded, at most %d", ErrInvalid, what, len(b), MaxDocumentBytes)
	}
	return nil
}

// Interaction validates doc for userID, filling an empty doc.UserID.
func (v Validator) Interaction(userID string, doc *Interaction) error {
	if doc == nil {
		return fmt.Errorf("%w: nil interaction", ErrInvalid)
	}
	if err := owner(userID, &doc.UserID); err != nil {
		return err
	}
	if err := CheckID("interaction id", doc.ID); err != nil {
		return err
	}
	if err := CheckID("interaction session id", doc.SessionID); err != nil {
		return err
	}
	if doc.FirstTurn < 0 || doc.LastTurn < doc.FirstTurn {
		return fmt.Errorf("%w: interaction %s: turn range %d..%d", ErrInvalid, doc.ID, doc.FirstTurn, doc.LastTurn)
	}
	if err := v.vector("content_vector", doc.ContentVector); err != nil {
		return err
	}
	if err := v.vector("summary_vector", doc.SummaryVector); err != nil {
		return err
	}
	return size("interaction "+doc.ID, doc)
}

// Insight validates doc for userID, filling an empty doc.UserID and
// doc.ContentHash.
func (v Validator) Insight(userID string, doc *Insight) error {
	if doc == nil {
		return fmt.Errorf("%w: nil insight", ErrInvalid)
	}
	if err := owner(userID, &doc.UserID); err != nil {
		return err
	}
	if err := CheckID("insight id", doc.ID); err != nil {
		return err
	}
	switch doc.InsightType {
	case InsightSession:
	case InsightLongTerm:
		if doc.ID != LongTermID(userID) {
			return fmt.Errorf("%w: long-term insight id must be %q, got %q", ErrInvalid, LongTermID(userID), doc.ID)
		}
	default:
		return fmt.Errorf("%w: insight %s: unknown insight_type %q", ErrInvalid, doc.ID, doc.InsightType)
	}
	if c := doc.Confidence; c != nil && (math.IsNaN(*c) || *c < 0 || *c > 1) {
		return fmt.Errorf("%w: insight %s: confidence %v outside [0, 1]", ErrInvalid, doc.ID, *c)
	}
	if doc.SupersedeReason != "" && !doc.SupersedeReason.Valid() {
		return fmt.Errorf("%w: insight %s: unknown supersede_reason %q", ErrInvalid, doc.ID, doc.SupersedeReason)
	}
	if err := v.vector("insight_vector", doc.InsightVector); err != nil {
		return err
	}
	if doc.ContentHash == "" {
		doc.ContentHash = ContentHash(doc.InsightText)
	}
	return size("insight "+doc.ID, doc)
}

// Session validates doc for userID, filling an empty doc.UserID, Status
// (active) and ReflectionStatus (pending).
func (v Validator) Session(userID string, doc *SessionSummary) error {
	if doc == nil {
		return fmt.Errorf("%w: nil session", ErrInvalid)
	}
	if err := owner(userID, &doc.UserID); err != nil {
		return err
	}
	if err := CheckID("session id", doc.ID); err != nil {
		return err
	}
	if doc.ID == UserStateID {
		return fmt.Errorf("%w: session id %q is reserved", ErrInvalid, doc.ID)
	}
	switch doc.Status {
	case "":
		doc.Status = SessionActive
	case SessionActive, SessionCompleted:
	default:
		return fmt.Errorf("%w: session %s: unknown status %q", ErrInvalid, doc.ID, doc.Status)
	}
	switch doc.ReflectionStatus {
	case "":
		doc.ReflectionStatus = ReflectionPending
	case ReflectionPending, ReflectionNoInsight, ReflectionProcessed:
	default:
		return fmt.Errorf("%w: session %s: unknown reflection_status %q", ErrInvalid, doc.ID, doc.ReflectionStatus)
	}
	if doc.ReflectedThrough < 0 {
		return fmt.Errorf("%w: session %s: negative reflected_through %d", ErrInvalid, doc.ID, doc.ReflectedThrough)
	}
	if err := v.vector("summary_vector", doc.SummaryVector); err != nil {
		return err
	}
	return size("session "+doc.ID, doc)
}

// Supersession validates s and returns it with At defaulted to now.
func (v Validator) Supersession(id string, s Supersession) (Supersession, error) {
	if err := CheckID("insight id", id); err != nil {
		return s, err
	}
	if !s.Reason.Valid() {
		return s, fmt.Errorf("%w: supersede %s: unknown reason %q", ErrInvalid, id, s.Reason)
	}
	if s.By == "" && s.Reason != ReasonForgotten {
		return s, fmt.Errorf("%w: supersede %s: reason %q needs the winner's id", ErrInvalid, id, s.Reason)
	}
	if s.By != "" {
		if err := CheckID("superseding insight id", s.By); err != nil {
			return s, err
		}
		if s.By == id {
			return s, fmt.Errorf("%w: insight %s cannot supersede itself", ErrInvalid, id)
		}
	}
	if s.At.IsZero() {
		s.At = time.Now().UTC()
	}
	return s, nil
}

// Search validates q for a search over kind and returns it with defaults
// applied: TopK, and the kind's default vector fields.
func (v Validator) Search(kind Kind, q SearchRequest) (SearchRequest, error) {
	if q.Text == "" && len(q.Vector) == 0 {
		return q, fmt.Errorf("%w: search %s: neither text nor vector given", ErrInvalid, kind)
	}
	if len(q.Text) > MaxQueryBytes {
		return q, fmt.Errorf("%w: search %s: query text is %d bytes, at most %d", ErrInvalid, kind, len(q.Text), MaxQueryBytes)
	}
	if err := v.vector("query vector", q.Vector); err != nil {
		return q, err
	}
	if q.TopK < 0 || q.TopK > MaxTopK {
		return q, fmt.Errorf("%w: search %s: top_k %d outside [0, %d]", ErrInvalid, kind, q.TopK, MaxTopK)
	}
	if q.TopK == 0 {
		q.TopK = DefaultTopK
	}
	if math.IsNaN(q.MinSimilarity) || q.MinSimilarity < -1 || q.MinSimilarity > 1 {
		return q, fmt.Errorf("%w: search %s: min similarity %v outside [-1, 1]", ErrInvalid, kind, q.MinSimilarity)
	}
	if q.SessionID != "" {
		if err := CheckID("session id filter", q.SessionID); err != nil {
			return q, err
		}
	}
	allowed := VectorFieldsOf(kind)
	if allowed == nil {
		return q, fmt.Errorf("%w: unknown kind %q", ErrInvalid, kind)
	}
	if len(q.VectorFields) == 0 {
		q.VectorFields = allowed
	}
	for _, f := range q.VectorFields {
		ok := false
		for _, a := range allowed {
			ok = ok || f == a
		}
		if !ok {
			return q, fmt.Errorf("%w: search %s: no vector field %q", ErrInvalid, kind, f)
		}
	}
	return q, nil
}

// VectorFieldsOf returns the vector fields of a kind, or nil for an unknown
// kind.
func VectorFieldsOf(kind Kind) []VectorField {
	switch kind {
	case KindInteraction:
		return []VectorField{FieldContentVector, FieldSummaryVector}
	case KindInsight:
		return []VectorField{FieldInsightVector}
	case KindSessionSummary:
		return []VectorField{FieldSummaryVector}
	}
	return nil
}
