package cosmos

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/agentmemory/agentmemory/store"
)

// Documents are stored with the JSON of package store, with three
// differences the queries rely on:
//
//   - The kind's ordered time field (interactions: timestamp; insights:
//     created_at; sessions: start_time) is written in UTC with a fixed
//     width of nine fractional digits, so that string order is time order
//     in range filters and ORDER BY. It reads back as the same instant.
//   - search_terms (the distinct lower-cased words of the kind's
//     full-text fields) and search_length (their word count) serve the
//     full-text candidate match and the BM25 statistics.
//   - vector_fields lists the vector fields the document has, so that a
//     vector leg can skip documents without its vector through the range
//     index (the vector paths themselves are excluded from it).
//
// _etag is never written: the service sets it.

// timeLayout is fixed-width RFC 3339 in UTC.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// wireTime is a time.Time that marshals as timeLayout.
type wireTime time.Time

func (t wireTime) MarshalJSON() ([]byte, error) {
	return []byte(`"` + timeKey(time.Time(t)) + `"`), nil
}

func timeKey(t time.Time) string { return t.UTC().Format(timeLayout) }

// derived are the fields the store adds to every document.
type derived struct {
	SearchTerms  []string `json:"search_terms"`
	SearchLength int      `json:"search_length"`
	VectorFields []string `json:"vector_fields"`
}

func derive(texts []string, vectors map[store.VectorField][]float32) derived {
	var d derived
	seen := make(map[string]bool)
	for _, t := range texts {
		for _, w := range words(t) {
			d.SearchLength++
			if !seen[w] {
				seen[w] = true
				d.SearchTerms = append(d.SearchTerms, w)
			}
		}
	}
	slices.Sort(d.SearchTerms)
	if d.SearchTerms == nil {
		d.SearchTerms = []string{}
	}
	d.VectorFields = []string{}
	for _, f := range []store.VectorField{store.FieldContentVector, store.FieldSummaryVector, store.FieldInsightVector} {
		if len(vectors[f]) > 0 {
			d.VectorFields = append(d.VectorFields, string(f))
		}
	}
	return d
}

// words returns the lower-cased words of text: maximal runs of letters,
// digits and combining marks. Every other character separates words, so
// no text is ever query syntax.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.IsMark(r)
	})
}

// queryWords returns the distinct words of a query, at most maxQueryWords.
func queryWords(text string) []string {
	var out []string
	for _, w := range words(text) {
		if !slices.Contains(out, w) {
			out = append(out, w)
			if len(out) == maxQueryWords {
				break
			}
		}
	}
	return out
}

func interactionText(d *store.Interaction) []string {
	return []string{d.Content, d.Summary, strings.Join(d.Metadata.MentionedTopics, " "), strings.Join(d.Metadata.Entities, " ")}
}

func insightText(d *store.Insight) []string { return []string{d.InsightText} }

func sessionText(d *store.Session) []string {
	return []string{d.Summary, strings.Join(d.KeyTopics, " ")}
}

type wireInteraction struct {
	*store.Interaction
	Timestamp wireTime `json:"timestamp"`
	derived
}

type wireInsight struct {
	*store.Insight
	CreatedAt wireTime `json:"created_at"`
	derived
}

type wireSession struct {
	*store.Session
	StartTime wireTime `json:"start_time"`
	ETag      string   `json:"_etag,omitempty"` // shadows the document's: never sent
	derived
}

func encodeInteraction(d *store.Interaction) ([]byte, error) {
	return marshal("interaction "+d.ID, wireInteraction{d, wireTime(d.Timestamp),
		derive(interactionText(d), map[store.VectorField][]float32{
			store.FieldContentVector: d.ContentVector, store.FieldSummaryVector: d.SummaryVector})})
}

func encodeInsight(d *store.Insight) ([]byte, error) {
	return marshal("insight "+d.ID, wireInsight{d, wireTime(d.CreatedAt),
		derive(insightText(d), map[store.VectorField][]float32{store.FieldInsightVector: d.InsightVector})})
}

func encodeSession(d *store.Session) ([]byte, error) {
	return marshal("session "+d.ID, wireSession{d, wireTime(d.StartTime), "",
		derive(sessionText(d), map[store.VectorField][]float32{store.FieldSummaryVector: d.SummaryVector})})
}

func marshal(what string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: encode %s: %v", store.ErrInvalid, what, err)
	}
	return b, nil
}

// decode unmarshals a stored document (system and derived fields are
// ignored) and normalises its times to UTC.
func decode[T any](b []byte) (*T, error) {
	d := new(T)
	if err := json.Unmarshal(b, d); err != nil {
		return nil, fmt.Errorf("cosmos: decode %T: %w", d, err)
	}
	switch x := any(d).(type) {
	case *store.Interaction:
		x.Timestamp = x.Timestamp.UTC()
	case *store.Insight:
		x.CreatedAt, x.UpdatedAt, x.SupersededAt = x.CreatedAt.UTC(), x.UpdatedAt.UTC(), x.SupersededAt.UTC()
	case *store.Session:
		x.StartTime, x.EndTime, x.UpdatedAt = x.StartTime.UTC(), x.EndTime.UTC(), x.UpdatedAt.UTC()
	}
	return d, nil
}
