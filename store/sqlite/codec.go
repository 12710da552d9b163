package sqlite

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/agentmemory/agentmemory/store"
)

// timeLayout is fixed width in UTC, so that for the years JSON can hold
// (0000-9999) the text sorts like the instant.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

func timeKey(t time.Time) string { return t.UTC().Format(timeLayout) }

// encodeVector returns v as little-endian float32s, or nil (SQL NULL) for
// an empty vector.
func encodeVector(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// decodeVector is the inverse of encodeVector. It fails on a length that is
// not a multiple of 4 and on NaN or infinite components, which no valid
// write stores.
func decodeVector(b []byte) ([]float32, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("vector blob of %d bytes is not a whole number of float32s", len(b))
	}
	return decodeVectorInto(b, make([]float32, len(b)/4))
}

// decodeVectorInto is decodeVector into v, which has len(b)/4 elements.
func decodeVectorInto(b []byte, v []float32) ([]float32, error) {
	for i := range v {
		x := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, fmt.Errorf("vector blob component %d is %v", i, x)
		}
		v[i] = x
	}
	return v, nil
}

// vecArena hands out vectors carved from large shared blocks, so that a
// loaded set's vectors lie next to each other in memory, in row order: a
// scan then streams through memory instead of chasing one allocation per
// vector.
type vecArena struct{ block []float32 }

const arenaBlock = 1 << 18 // floats: 1 MiB

// decode is decodeVector into the arena.
func (a *vecArena) decode(b []byte) ([]float32, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("vector blob of %d bytes is not a whole number of float32s", len(b))
	}
	n := len(b) / 4
	if cap(a.block)-len(a.block) < n {
		a.block = make([]float32, 0, max(n, arenaBlock))
	}
	l := len(a.block)
	a.block = a.block[:l+n]
	return decodeVectorInto(b, a.block[l:l+n:l+n])
}

// The doc column holds a document's JSON without its vectors (stored in
// their own columns) and without its ETag (its own column too).

func encodeInteraction(d *store.Interaction) (string, error) {
	c := *d
	c.ContentVector, c.SummaryVector = nil, nil
	return marshal(&c)
}

func encodeInsight(d *store.Insight) (string, error) {
	c := *d
	c.InsightVector = nil
	return marshal(&c)
}

func encodeSession(d *store.Session) (string, error) {
	c := *d
	c.SummaryVector, c.ETag = nil, ""
	return marshal(&c)
}

// marshal returns v's JSON as a string: the doc column is TEXT in a STRICT
// table, which refuses a BLOB.
func marshal(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

var errEmptyDoc = errors.New("empty document")

func decodeInteraction(doc, content, summary []byte) (*store.Interaction, error) {
	if len(doc) == 0 {
		return nil, errEmptyDoc
	}
	var d store.Interaction
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	var err error
	if d.ContentVector, err = decodeVector(content); err != nil {
		return nil, fmt.Errorf("content_vector: %w", err)
	}
	if d.SummaryVector, err = decodeVector(summary); err != nil {
		return nil, fmt.Errorf("summary_vector: %w", err)
	}
	return &d, nil
}

func decodeInsight(doc, vec []byte) (*store.Insight, error) {
	if len(doc) == 0 {
		return nil, errEmptyDoc
	}
	var d store.Insight
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	var err error
	if d.InsightVector, err = decodeVector(vec); err != nil {
		return nil, fmt.Errorf("insight_vector: %w", err)
	}
	return &d, nil
}

func decodeSession(doc, vec []byte, etag string) (*store.Session, error) {
	if len(doc) == 0 {
		return nil, errEmptyDoc
	}
	var d store.Session
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	var err error
	if d.SummaryVector, err = decodeVector(vec); err != nil {
		return nil, fmt.Errorf("summary_vector: %w", err)
	}
	d.ETag = etag
	return &d, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
