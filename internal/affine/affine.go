// Package affine wraps an embedder so that the cosine similarity of any
// two of its texts becomes an affine function of the wrapped one's:
//
//	cos' = Floor + (1 − Floor)·cos
//
// # How
//
// Each vector v is normalised and extended by one constant dimension:
// v' = (√(1−Floor)·v/‖v‖, √Floor). Then v'·w' = (1−Floor)·cos + Floor and
// ‖v'‖ = 1, exactly (up to float32 rounding). Floor 0.15 moves the lexical
// embedder's cosines (unrelated texts about 0, related ones 0.2–0.4) to
// about 0.15–0.5, where text-embedding-3-small's sit; Floor 0.7 to about
// 0.7–0.9, where text-embedding-ada-002's sit. The ranking of any list of
// documents by similarity to a query is unchanged: what changes is only
// the scale an absolute threshold would be read on. Retrieval must not
// care; tests and the LoCoMo command (-cosine-floor) use this to prove it.
//
// # Lexical or not
//
// The wrapper does not report itself lexical (embed.Lexical), even around
// embed/lexical: memory stores and searches its vectors, which is what it
// is for.
//
// A zero vector stays a zero vector (of one more dimension): its cosine
// with anything is 0, as before.
package affine

import (
	"context"
	"fmt"
	"math"

	"github.com/agentmemory/agentmemory/embed"
)

// Embedder is an embed.Embedder whose cosines are the wrapped one's mapped
// by cos' = Floor + (1 − Floor)·cos. Its vectors have one more dimension.
type Embedder struct {
	inner embed.Embedder
	floor float64
}

// New wraps e with the given floor, in [0, 1).
func New(e embed.Embedder, floor float64) (*Embedder, error) {
	if e == nil {
		return nil, fmt.Errorf("affine: nil embedder")
	}
	if math.IsNaN(floor) || floor < 0 || floor >= 1 {
		return nil, fmt.Errorf("affine: floor %v outside [0, 1)", floor)
	}
	return &Embedder{inner: e, floor: floor}, nil
}

// Model names the wrapped model and the floor, so that vectors of another
// floor are never compared with these.
func (a *Embedder) Model() string { return fmt.Sprintf("%s+affine%.3f", a.inner.Model(), a.floor) }

// Dimensions is the wrapped embedder's plus one.
func (a *Embedder) Dimensions() int { return a.inner.Dimensions() + 1 }

// Embed embeds texts with the wrapped embedder and maps each vector.
func (a *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := a.inner.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	scale, extra := math.Sqrt(1-a.floor), float32(math.Sqrt(a.floor))
	out := make([][]float32, len(vs))
	for i, v := range vs {
		w := make([]float32, len(v)+1)
		if n := embed.Norm(v); n > 0 {
			f := float32(scale / float64(n))
			for j, x := range v {
				w[j] = x * f
			}
			w[len(v)] = extra
		}
		out[i] = w
	}
	return out, nil
}
