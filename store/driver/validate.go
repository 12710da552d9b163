package driver

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentmemory/agentmemory/store"
)

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
		return fmt.Errorf("%w: %s has %d dimensions, the store holds %d", store.ErrInvalid, what, len(vec), v.Dimensions)
	}
	for i, x := range vec {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("%w: %s[%d] is %v", store.ErrInvalid, what, i, x)
		}
	}
	return nil
}

func owner(userID string, docUserID *string) error {
	if err := store.CheckUserID(userID); err != nil {
		return err
	}
	switch *docUserID {
	case "":
		*docUserID = userID
	case userID:
	default:
		return fmt.Errorf("%w: document belongs to user %q, not %q", store.ErrInvalid, *docUserID, userID)
	}
	return nil
}

func size(what string, doc any) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", store.ErrInvalid, what, err)
	}
	if len(b) > store.MaxDocumentBytes {
		return fmt.Errorf("%w: %s is %d bytes encoded, at most %d", store.ErrInvalid, what, len(b), store.MaxDocumentBytes)
	}
	return nil
}

// Interaction validates doc for userID, filling an empty doc.UserID.
func (v Validator) Interaction(userID string, doc *store.Interaction) error {
	if doc == nil {
		return fmt.Errorf("%w: nil interaction", store.ErrInvalid)
	}
	if err := owner(userID, &doc.UserID); err != nil {
		return err
	}
	if err := store.CheckID("interaction id", doc.ID); err != nil {
		return err
	}
	if err := store.CheckID("interaction session id", doc.SessionID); err != nil {
		return err
	}
	if doc.FirstTurn < 0 || doc.LastTurn < doc.FirstTurn {
		return fmt.Errorf("%w: interaction %s: turn range %d..%d", store.ErrInvalid, doc.ID, doc.FirstTurn, doc.LastTurn)
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
func (v Validator) Insight(userID string, doc *store.Insight) error {
	if doc == nil {
		return fmt.Errorf("%w: nil insight", store.ErrInvalid)
	}
	if err := owner(userID, &doc.UserID); err != nil {
		return err
	}
	if err := store.CheckID("insight id", doc.ID); err != nil {
		return err
	}
	switch doc.InsightType {
	case store.InsightSession:
	case store.InsightLongTerm:
		if doc.ID != store.LongTermID(userID) {
			return fmt.Errorf("%w: long-term insight id must be %q, got %q", store.ErrInvalid, store.LongTermID(userID), doc.ID)
		}
	default:
		return fmt.Errorf("%w: insight %s: unknown insight_type %q", store.ErrInvalid, doc.ID, doc.InsightType)
	}
	if c := doc.Confidence; c != nil && (math.IsNaN(*c) || *c < 0 || *c > 1) {
		return fmt.Errorf("%w: insight %s: confidence %v outside [0, 1]", store.ErrInvalid, doc.ID, *c)
	}
	if doc.SupersedeReason != "" && !doc.SupersedeReason.Valid() {
		return fmt.Errorf("%w: insight %s: unknown supersede_reason %q", store.ErrInvalid, doc.ID, doc.SupersedeReason)
	}
	if err := v.vector("insight_vector", doc.InsightVector); err != nil {
		return err
	}
	if doc.ContentHash == "" {
		doc.ContentHash = store.ContentHash(doc.InsightText)
	}
	return size("insight "+doc.ID, doc)
}

// Session validates doc for userID, filling an empty doc.UserID, Status
// (active) and ReflectionStatus (pending).
func (v Validator) Session(userID string, doc *store.Session) error {
	if doc == nil {
		return fmt.Errorf("%w: nil session", store.ErrInvalid)
	}
	if err := owner(userID, &doc.UserID); err != nil {
		return err
	}
	if err := store.CheckID("session id", doc.ID); err != nil {
		return err
	}
	if doc.ID == store.UserStateID {
		return fmt.Errorf("%w: session id %q is reserved", store.ErrInvalid, doc.ID)
	}
	switch doc.Status {
	case "":
		doc.Status = store.SessionActive
	case store.SessionActive, store.SessionCompleted:
	default:
		return fmt.Errorf("%w: session %s: unknown status %q", store.ErrInvalid, doc.ID, doc.Status)
	}
	switch doc.ReflectionStatus {
	case "":
		doc.ReflectionStatus = store.ReflectionPending
	case store.ReflectionPending, store.ReflectionNoInsight, store.ReflectionProcessed:
	default:
		return fmt.Errorf("%w: session %s: unknown reflection_status %q", store.ErrInvalid, doc.ID, doc.ReflectionStatus)
	}
	if doc.ReflectedThrough < 0 {
		return fmt.Errorf("%w: session %s: negative reflected_through %d", store.ErrInvalid, doc.ID, doc.ReflectedThrough)
	}
	if err := v.vector("summary_vector", doc.SummaryVector); err != nil {
		return err
	}
	return size("session "+doc.ID, doc)
}

// Supersession validates s and returns it with At defaulted to now.
func (v Validator) Supersession(id string, s store.Supersession) (store.Supersession, error) {
	if err := store.CheckID("insight id", id); err != nil {
		return s, err
	}
	if !s.Reason.Valid() {
		return s, fmt.Errorf("%w: supersede %s: unknown reason %q", store.ErrInvalid, id, s.Reason)
	}
	if s.By == "" && s.Reason != store.ReasonForgotten {
		return s, fmt.Errorf("%w: supersede %s: reason %q needs the winner's id", store.ErrInvalid, id, s.Reason)
	}
	if s.By != "" {
		if err := store.CheckID("superseding insight id", s.By); err != nil {
			return s, err
		}
		if s.By == id {
			return s, fmt.Errorf("%w: insight %s cannot supersede itself", store.ErrInvalid, id)
		}
	}
	if s.At.IsZero() {
		s.At = time.Now().UTC()
	}
	return s, nil
}

// Search validates q for a search over kind and returns it with defaults
// applied: TopK, and the kind's default vector fields.
func (v Validator) Search(kind store.Kind, q store.SearchRequest) (store.SearchRequest, error) {
	if q.Text == "" && len(q.Vector) == 0 {
		return q, fmt.Errorf("%w: search %s: neither text nor vector given", store.ErrInvalid, kind)
	}
	if len(q.Text) > store.MaxQueryBytes {
		return q, fmt.Errorf("%w: search %s: query text is %d bytes, at most %d", store.ErrInvalid, kind, len(q.Text), store.MaxQueryBytes)
	}
	if err := v.vector("query vector", q.Vector); err != nil {
		return q, err
	}
	if q.TopK < 0 || q.TopK > store.MaxTopK {
		return q, fmt.Errorf("%w: search %s: top_k %d outside [0, %d]", store.ErrInvalid, kind, q.TopK, store.MaxTopK)
	}
	if q.TopK == 0 {
		q.TopK = store.DefaultTopK
	}
	if math.IsNaN(q.MinSimilarity) || q.MinSimilarity < -1 || q.MinSimilarity > 1 {
		return q, fmt.Errorf("%w: search %s: min similarity %v outside [-1, 1]", store.ErrInvalid, kind, q.MinSimilarity)
	}
	if q.SessionID != "" {
		if err := store.CheckID("session id filter", q.SessionID); err != nil {
			return q, err
		}
	}
	allowed := vectorFieldsOf(kind)
	if allowed == nil {
		return q, fmt.Errorf("%w: unknown kind %q", store.ErrInvalid, kind)
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
			return q, fmt.Errorf("%w: search %s: no vector field %q", store.ErrInvalid, kind, f)
		}
	}
	return q, nil
}

// vectorFieldsOf returns the vector fields of a kind, or nil for an unknown
// kind.
func vectorFieldsOf(kind store.Kind) []store.VectorField {
	switch kind {
	case store.KindInteraction:
		return []store.VectorField{store.FieldContentVector, store.FieldSummaryVector}
	case store.KindInsight:
		return []store.VectorField{store.FieldInsightVector}
	case store.KindSessionSummary:
		return []store.VectorField{store.FieldSummaryVector}
	}
	return nil
}

// Turn validates t for userID before AppendTurn, filling an empty UserID.
func (v Validator) Turn(userID string, t *store.Turn) error {
	if t == nil {
		return fmt.Errorf("%w: nil turn", store.ErrInvalid)
	}
	if err := owner(userID, &t.UserID); err != nil {
		return err
	}
	if err := store.CheckID("session id", t.SessionID); err != nil {
		return err
	}
	if err := store.CheckID("turn id", t.ID); err != nil {
		return err
	}
	if len(t.Messages) == 0 {
		return fmt.Errorf("%w: turn %s: no messages", store.ErrInvalid, t.ID)
	}
	if t.Seq < 0 {
		return fmt.Errorf("%w: turn %s: negative seq %d", store.ErrInvalid, t.ID, t.Seq)
	}
	return size("turn "+t.ID, t)
}

// UserState validates doc for userID, filling an empty UserID.
func (v Validator) UserState(userID string, doc *store.UserState) error {
	if doc == nil {
		return fmt.Errorf("%w: nil user state", store.ErrInvalid)
	}
	if err := owner(userID, &doc.UserID); err != nil {
		return err
	}
	if doc.LeaseOwner != "" {
		if err := store.CheckID("lease owner", doc.LeaseOwner); err != nil {
			return err
		}
	}
	if doc.SinceReconcile < 0 || doc.SinceProfile < 0 {
		return fmt.Errorf("%w: user state: negative counter", store.ErrInvalid)
	}
	return size("user state", doc)
}

// DeletionRecord validates rec before AppendDeletion: Seq from 1, At set,
// Hash and Subject present, a short Reason without control characters,
// valid user and item ids where given, every item of a known kind (one of
// Kinds or store.KindTurn) with a known action, a Count of at least 1 and an
// IDHash, and an encoding of at most store.MaxDocumentBytes.
func (v Validator) DeletionRecord(rec *store.DeletionRecord) error {
	if rec == nil {
		return fmt.Errorf("%w: nil deletion record", store.ErrInvalid)
	}
	if rec.Seq < 1 {
		return fmt.Errorf("%w: deletion record: seq %d, numbers start at 1", store.ErrInvalid, rec.Seq)
	}
	what := fmt.Sprintf("deletion record %d", rec.Seq)
	switch {
	case rec.At.IsZero():
		return fmt.Errorf("%w: %s: no time", store.ErrInvalid, what)
	case rec.Hash == "":
		return fmt.Errorf("%w: %s: no hash", store.ErrInvalid, what)
	case rec.Subject == "":
		return fmt.Errorf("%w: %s: no subject", store.ErrInvalid, what)
	case rec.Reason == "":
		return fmt.Errorf("%w: %s: no reason", store.ErrInvalid, what)
	case len(rec.Reason) > store.MaxReasonBytes:
		return fmt.Errorf("%w: %s: reason is %d bytes, at most %d", store.ErrInvalid, what, len(rec.Reason), store.MaxReasonBytes)
	case !utf8.ValidString(rec.Reason):
		return fmt.Errorf("%w: %s: reason is not valid UTF-8", store.ErrInvalid, what)
	}
	for _, r := range rec.Reason {
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: %s: reason %q contains a control character", store.ErrInvalid, what, rec.Reason)
		}
	}
	if rec.UserID != "" {
		if err := store.CheckUserID(rec.UserID); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	for i, it := range rec.Items {
		if !it.Kind.Valid() && it.Kind != store.KindTurn {
			return fmt.Errorf("%w: %s: item %d: unknown kind %q", store.ErrInvalid, what, i, it.Kind)
		}
		if it.Action != store.ActionDeleted && it.Action != store.ActionRewritten {
			return fmt.Errorf("%w: %s: item %d: action %q, want %q or %q", store.ErrInvalid, what, i, it.Action, store.ActionDeleted, store.ActionRewritten)
		}
		if it.Count < 1 {
			return fmt.Errorf("%w: %s: item %d: count %d, at least 1", store.ErrInvalid, what, i, it.Count)
		}
		if it.IDHash == "" {
			return fmt.Errorf("%w: %s: item %d: no id hash", store.ErrInvalid, what, i)
		}
		if it.ID != "" {
			if err := store.CheckID(fmt.Sprintf("%s: item %d id", what, i), it.ID); err != nil {
				return err
			}
		}
	}
	return size(what, rec)
}

// Record validates r before PutRecord: a valid id, a Time in the years
// JSON and the backends' time keys can hold (0000-9999, in UTC), and a
// Body that is valid JSON in UTF-8 of at most store.MaxDocumentBytes.
// The user id is the caller's to check.
func (v Validator) Record(r *store.Record) error {
	if r == nil {
		return fmt.Errorf("%w: nil record", store.ErrInvalid)
	}
	if err := store.CheckID("record id", r.ID); err != nil {
		return err
	}
	if err := recordTime("record "+r.ID+" time", r.Time); err != nil {
		return err
	}
	switch {
	case len(r.Body) > store.MaxDocumentBytes:
		return fmt.Errorf("%w: record %s: body is %d bytes, at most %d", store.ErrInvalid, r.ID, len(r.Body), store.MaxDocumentBytes)
	case !utf8.Valid(r.Body):
		return fmt.Errorf("%w: record %s: body is not valid UTF-8", store.ErrInvalid, r.ID)
	case !json.Valid(r.Body):
		return fmt.Errorf("%w: record %s: body is not valid JSON", store.ErrInvalid, r.ID)
	}
	return nil
}

// RecordFilter validates f before ListRecords: a known State, a Prefix
// of valid UTF-8 no longer than an id, an Until in the years Record
// allows, and a Limit that is not negative.
func (v Validator) RecordFilter(f store.RecordFilter) error {
	switch f.State {
	case "", store.RecordActive, store.RecordFinished:
	default:
		return fmt.Errorf("%w: record filter: unknown state %q", store.ErrInvalid, f.State)
	}
	if len(f.Prefix) > store.MaxIDBytes || !utf8.ValidString(f.Prefix) {
		return fmt.Errorf("%w: record filter: prefix %q is no id's prefix", store.ErrInvalid, f.Prefix)
	}
	if !f.Until.IsZero() {
		if err := recordTime("record filter until", f.Until); err != nil {
			return err
		}
	}
	if f.Limit < 0 {
		return fmt.Errorf("%w: record filter: negative limit %d", store.ErrInvalid, f.Limit)
	}
	return nil
}

// recordTime refuses a time outside the years 0000-9999 in UTC, which a
// fixed-width time key cannot order.
func recordTime(what string, t time.Time) error {
	if y := t.UTC().Year(); y < 0 || y > 9999 {
		return fmt.Errorf("%w: %s: year %d outside 0000-9999", store.ErrInvalid, what, y)
	}
	return nil
}
