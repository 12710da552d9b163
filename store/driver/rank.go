package driver

import (
	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/internal/topk"
	"github.com/agentmemory/agentmemory/store"
)

// Scored is a document id with a leg's score (higher is better).
type Scored struct {
	ID    string
	Score float64
}

// Ranked is one fused result, before the backend loads its document.
type Ranked struct {
	ID         string
	Score      float64
	Similarity float64
	TextScore  float64
}

// VectorRanker keeps the k candidates most similar to a query vector, for
// backends that rank vectors in Go. Add candidates, then call Result. The
// zero value is not usable; use NewVectorRanker.
type VectorRanker struct {
	query     []float32
	queryNorm float32
	min       float64
	h         *topk.Heap[Scored]
}

// NewVectorRanker returns a ranker keeping the k best candidates whose
// cosine similarity to query is at least minSim.
func NewVectorRanker(query []float32, k int, minSim float64) *VectorRanker {
	return &VectorRanker{query: query, queryNorm: embed.Norm(query), min: minSim, h: topk.New(k, Below)}
}

// Add considers a candidate with vector v and its precomputed norm (pass
// embed.Norm(v)); vectors of another length than the query are skipped.
func (r *VectorRanker) Add(id string, v []float32, norm float32) {
	if len(v) != len(r.query) || norm == 0 || r.queryNorm == 0 {
		return
	}
	sim := float64(embed.Dot(r.query, v) / (norm * r.queryNorm))
	if sim < r.min {
		return
	}
	r.h.Offer(Scored{ID: id, Score: sim})
}

// Result returns the kept candidates, best first (ties by id).
func (r *VectorRanker) Result() []Scored {
	if out := r.h.Sorted(); out != nil {
		return out
	}
	return []Scored{}
}

// Below reports whether a ranks below b: a lower score, or an equal score
// and a greater id. Every ranking in Go orders its candidates so.
func Below(a, b Scored) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return a.ID > b.ID
}

// Combine merges ranked legs into at most topK results: each vector leg and
// the text leg (each best first) count as one list. With a single non-empty
// leg its order and score are kept; with several they are fused with
// store.FuseRRF(store.RRFK). Similarity is a document's best score over the
// vector legs, TextScore its text-leg score.
func Combine(topK int, vectorLegs [][]Scored, textLeg []Scored) []Ranked {
	sim := make(map[string]float64)
	for _, leg := range vectorLegs {
		for _, s := range leg {
			if old, ok := sim[s.ID]; !ok || s.Score > old {
				sim[s.ID] = s.Score
			}
		}
	}
	text := make(map[string]float64, len(textLeg))
	for _, s := range textLeg {
		text[s.ID] = s.Score
	}
	var legs [][]Scored
	for _, leg := range vectorLegs {
		if len(leg) > 0 {
			legs = append(legs, leg)
		}
	}
	if len(textLeg) > 0 {
		legs = append(legs, textLeg)
	}
	var out []Ranked
	switch len(legs) {
	case 0:
		return nil
	case 1:
		for _, s := range legs[0] {
			out = append(out, Ranked{ID: s.ID, Score: s.Score, Similarity: sim[s.ID], TextScore: text[s.ID]})
		}
	default:
		lists := make([][]string, len(legs))
		for i, leg := range legs {
			lists[i] = make([]string, len(leg))
			for j, s := range leg {
				lists[i][j] = s.ID
			}
		}
		for _, f := range store.FuseRRF(store.RRFK, lists...) {
			out = append(out, Ranked{ID: f.ID, Score: f.Score, Similarity: sim[f.ID], TextScore: text[f.ID]})
		}
	}
	if len(out) > topK {
		out = out[:topK]
	}
	return out
}
