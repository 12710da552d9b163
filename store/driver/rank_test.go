package driver

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sqrt32(x float32) float32 { return float32(math.Sqrt(float64(x))) }

func TestVectorRanker(t *testing.T) {
	q := []float32{1, 0}
	r := NewVectorRanker(q, 2, 0.1)
	add := func(id string, v []float32) {
		var n float32
		for _, x := range v {
			n += x * x
		}
		r.Add(id, v, sqrt32(n))
	}
	add("far", []float32{0, 1})  // 0: below threshold
	add("mid", []float32{1, 1})  // 0.707
	add("best", []float32{2, 0}) // 1
	add("low", []float32{1, 3})  // 0.316
	add("short", []float32{1})   // wrong length: skipped
	add("zero", []float32{0, 0}) // zero vector: skipped
	add("tie", []float32{1, 1})  // 0.707 exactly, id "tie" > "mid": loses the tie
	got := r.Result()
	require.Len(t, got, 2)
	assert.Equal(t, "best", got[0].ID)
	assert.Equal(t, "mid", got[1].ID)
	assert.InDelta(t, 1.0, got[0].Score, 1e-6)
}

func TestCombine(t *testing.T) {
	vec := []Scored{{"a", 0.9}, {"b", 0.8}}
	sum := []Scored{{"b", 0.95}}
	text := []Scored{{"c", 7.5}, {"a", 3}}
	got := Combine(2, [][]Scored{vec, sum}, text)
	require.Len(t, got, 2)
	// a: 1/61 + 1/62; b: 1/62 + 1/61 — tie on score, both best rank 1: id order.
	assert.Equal(t, "a", got[0].ID)
	assert.Equal(t, "b", got[1].ID)
	assert.InDelta(t, 0.9, got[0].Similarity, 1e-9)
	assert.InDelta(t, 3.0, got[0].TextScore, 1e-9)
	assert.InDelta(t, 0.95, got[1].Similarity, 1e-9)

	single := Combine(5, [][]Scored{nil}, text)
	require.Len(t, single, 2)
	assert.Equal(t, Ranked{ID: "c", Score: 7.5, TextScore: 7.5}, single[0])
	assert.Nil(t, Combine(5, nil, nil))
}
