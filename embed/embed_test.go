package embed_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/embed/lexical"
)

func TestVectorMaths(t *testing.T) {
	a := []float32{3, 4, 0, 0, 1}
	b := []float32{3, 4, 0, 0, 1}
	assert.InDelta(t, 26, embed.Dot(a, b), 1e-6)
	assert.InDelta(t, 5.0990195, embed.Norm(a), 1e-6)
	assert.InDelta(t, 1, embed.Cosine(a, b), 1e-6)
	assert.InDelta(t, -1, embed.Cosine(a, []float32{-3, -4, 0, 0, -1}), 1e-6)
	assert.InDelta(t, 0, embed.Cosine([]float32{1, 0}, []float32{0, 1}), 1e-6)
	assert.Equal(t, float32(0), embed.Cosine(a, make([]float32, 5)), "a zero vector has no direction")

	v := []float32{3, 4}
	embed.Normalize(v)
	assert.InDelta(t, 0.6, v[0], 1e-6)
	assert.InDelta(t, 0.8, v[1], 1e-6)
	z := []float32{0, 0}
	embed.Normalize(z)
	assert.Equal(t, []float32{0, 0}, z)

	assert.Panics(t, func() { embed.Dot([]float32{1}, []float32{1, 2}) })
}

func TestOne(t *testing.T) {
	e, err := lexical.New(lexical.Config{Dimensions: 16})
	require.NoError(t, err)
	v, err := embed.One(context.Background(), e, "an index fund")
	require.NoError(t, err)
	assert.Len(t, v, 16)

	_, err = embed.One(context.Background(), wrongDims{}, "x")
	assert.True(t, errors.Is(err, embed.ErrDimension), "got %v", err)
}

// wrongDims is a broken embedder: it promises 4 dimensions and returns 3.
type wrongDims struct{}

func (wrongDims) Model() string   { return "broken" }
func (wrongDims) Dimensions() int { return 4 }
func (wrongDims) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 2, 3}
	}
	return out, nil
}

// TestDotLengths checks Dot at every length around its eight-lane loop
// against a float64 reference.
func TestDotLengths(t *testing.T) {
	for n := range 41 {
		a, b := make([]float32, n), make([]float32, n)
		var want float64
		for i := range a {
			a[i], b[i] = float32(i%7)-2.5, float32(i%5)*0.25+0.5
			want += float64(a[i]) * float64(b[i])
		}
		assert.InDelta(t, want, embed.Dot(a, b), 1e-4, "n=%d", n)
	}
}

func BenchmarkDot384(b *testing.B) {
	x, y := make([]float32, 384), make([]float32, 384)
	for i := range x {
		x[i], y[i] = float32(i%13)/13, float32(i%11)/11
	}
	var sink float32
	for b.Loop() {
		sink += embed.Dot(x, y)
	}
	_ = sink
}
