package sqlite

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

func TestVectorRoundTrip(t *testing.T) {
	v := []float32{0, -1.5, float32(math.SmallestNonzeroFloat32), math.MaxFloat32, 3.25}
	b := encodeVector(v)
	assert.Len(t, b, 4*len(v))
	assert.Equal(t, []byte{0, 0, 0xc0, 0xbf}, b[4:8], "little-endian -1.5")
	got, err := decodeVector(b)
	require.NoError(t, err)
	assert.Equal(t, v, got)

	assert.Nil(t, encodeVector(nil), "no vector is SQL NULL")
	got, err = decodeVector(nil)
	require.NoError(t, err)
	assert.Nil(t, got)

	_, err = decodeVector([]byte{1, 2, 3})
	assert.ErrorContains(t, err, "not a whole number")
	_, err = decodeVector(encodeVector([]float32{1, float32(math.NaN())}))
	assert.ErrorContains(t, err, "component 1")
}

func TestTimeKeySortsLikeInstants(t *testing.T) {
	ts := []time.Time{
		{},
		time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(2026, 3, 1, 10, 0, 0, 0, time.FixedZone("x", 5*3600)), // 05:00 UTC
		time.Date(2026, 3, 1, 6, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 1, 6, 0, 0, 1, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
	}
	for i := 1; i < len(ts); i++ {
		assert.Less(t, timeKey(ts[i-1]), timeKey(ts[i]), "%v < %v", ts[i-1], ts[i])
		assert.Len(t, timeKey(ts[i]), len(timeLayout))
	}
}

func TestDocumentsStoredWithoutVectorsOrETag(t *testing.T) {
	in := &store.Interaction{ID: "i", ContentVector: []float32{1, 2}, SummaryVector: []float32{3}}
	s, err := encodeInteraction(in)
	require.NoError(t, err)
	assert.NotContains(t, s, "vector")
	assert.Equal(t, []float32{1, 2}, in.ContentVector, "the caller's document is not changed")
	got, err := decodeInteraction([]byte(s), encodeVector(in.ContentVector), encodeVector(in.SummaryVector))
	require.NoError(t, err)
	assert.Equal(t, in, got)

	ss := &store.Session{ID: "s", ETag: "e1", SummaryVector: []float32{1}}
	enc, err := encodeSession(ss)
	require.NoError(t, err)
	assert.NotContains(t, enc, "_etag")
	assert.NotContains(t, enc, "vector")
	got2, err := decodeSession([]byte(enc), encodeVector(ss.SummaryVector), "e2")
	require.NoError(t, err)
	assert.Equal(t, "e2", got2.ETag, "the ETag comes from its column")
}

// FuzzDecodeDocument feeds arbitrary bytes to the decoders of every kind as
// the doc column and the vector columns: they return an error or a
// document, never panic, and a vector that decodes re-encodes to the same
// bytes.
func FuzzDecodeDocument(f *testing.F) {
	f.Add([]byte(`{"id":"i1","user_id":"u","session_id":"s","content":"x","metadata":{"mentioned_topics":["a"],"entities":null}}`),
		encodeVector([]float32{1, 2, 3}), []byte(nil))
	f.Add([]byte(`{"id":"n","insight_type":"session","confidence":0.5,"created_at":"2026-03-01T10:00:00Z"}`),
		[]byte{0, 0, 0xc0, 0x7f}, []byte{1})
	f.Add([]byte(`{"id":"s","state":{"turns":[{"seq":1,"messages":[{"role":"user","content":"hi"}]}]}}`),
		[]byte{}, encodeVector([]float32{0.5}))
	f.Add([]byte(`null`), []byte(nil), []byte(nil))
	f.Add([]byte(`{"timestamp":"not a time"}`), []byte{0xff, 0xff, 0xff, 0xff}, []byte{0, 0, 0x80, 0x7f})
	f.Fuzz(func(t *testing.T, doc, a, b []byte) {
		_, _ = decodeInteraction(doc, a, b)
		_, _ = decodeInsight(doc, a)
		_, _ = decodeSession(doc, b, "etag")
		for _, blob := range [][]byte{a, b} {
			v, err := decodeVector(blob)
			if err != nil {
				continue
			}
			if len(blob) == 0 {
				if v != nil {
					t.Fatalf("empty blob decoded to %v", v)
				}
				continue
			}
			if !bytes.Equal(encodeVector(v), blob) {
				t.Fatalf("vector %v does not re-encode to %x", v, blob)
			}
		}
	})
}
