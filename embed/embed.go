// Package embed defines the Embedder interface that turns text into vectors,
// and the vector arithmetic the rest of the module shares.
//
// Implementations: embed/lexical (the offline default: lexical, not
// semantic), llm/openai (OpenAI, Azure OpenAI and OpenAI-compatible servers)
// and anything else that implements the interface.
package embed

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/agentmemory/agentmemory/internal/dot"
)

// Embedder turns texts into fixed-dimension vectors. Implementations must be
// safe for concurrent use.
type Embedder interface {
	// Model identifies the embedding model; vectors from different models
	// must not be compared.
	Model() string
	// Dimensions is the length of every vector Embed returns.
	Dimensions() int
	// Embed returns one vector per text, in order. An implementation may
	// refuse an empty text (remote APIs do) with an error naming its index;
	// callers embed only non-empty text.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// ErrDimension reports vectors of mismatched or unexpected length.
var ErrDimension = errors.New("embed: vector dimension mismatch")

// One embeds a single text.
func One(ctx context.Context, e Embedder, text string) ([]float32, error) {
	vs, err := e.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("embed: %s returned %d vectors for 1 text", e.Model(), len(vs))
	}
	if len(vs[0]) != e.Dimensions() {
		return nil, fmt.Errorf("%w: %s returned %d, want %d", ErrDimension, e.Model(), len(vs[0]), e.Dimensions())
	}
	return vs[0], nil
}

// Dot returns the dot product of a and b, which must have the same length
// (it panics otherwise).
// It sums in 32 interleaved lanes in a fixed order, the same on every
// platform, with an AVX kernel on amd64 (about 19 ns for 384 dimensions).
func Dot(a, b []float32) float32 { return dot.Dot(a, b) }

// Norm returns the Euclidean length of v.
func Norm(v []float32) float32 {
	return float32(math.Sqrt(float64(Dot(v, v))))
}

// Normalize scales v in place to unit length; a zero vector is left as is.
func Normalize(v []float32) {
	n := Norm(v)
	if n == 0 {
		return
	}
	inv := 1 / n
	for i := range v {
		v[i] *= inv
	}
}

// Cosine returns the cosine similarity of a and b, in [-1, 1], or 0 when
// either is a zero vector. a and b must have the same length.
func Cosine(a, b []float32) float32 {
	na, nb := Norm(a), Norm(b)
	if na == 0 || nb == 0 {
		return 0
	}
	return Dot(a, b) / (na * nb)
}

// Lexical is implemented by embedders whose vectors encode only the words
// of a text, such as embed/lexical's hashed words and n-grams. Retrieval
// matches words with full text already, and measured on LoCoMo a lexical
// vector added nothing to it at any weight (see retrieval), so with such
// an embedder no vector is computed or stored and searches have no vector
// leg.
type Lexical interface {
	// Lexical reports whether the vectors encode only words.
	Lexical() bool
}

// IsLexical reports whether e implements Lexical and says it is lexical.
func IsLexical(e Embedder) bool {
	l, ok := e.(Lexical)
	return ok && l.Lexical()
}
