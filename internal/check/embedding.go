package check

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/agentmemory/agentmemory/embed"
)

// Pair is a question and a stored memory: Related when the memory answers
// the question.
type Pair struct {
	Query, Memory string
	Related       bool
}

// related are questions a user asks and the memories that answer them.
// Like real ones, each shares a key word or name with its answer but is
// worded differently.
var related = [][2]string{
	{"What did we decide about my old 401k?", "We agreed to roll the 401k from my previous employer into an IRA at Fidelity in March."},
	{"When does my daughter Emma start college?", "Emma begins her first year at university in the autumn of 2027."},
	{"How much do I put into savings every month?", "Each month I move 500 dollars into my savings account on payday."},
	{"How do I feel about investment risk?", "Big market drops make me anxious, so I prefer low-risk, steady holdings."},
	{"Where does my sister live now?", "My sister moved to Lisbon last year and works there as a pharmacist."},
	{"What kind of dog did I adopt?", "Last weekend I brought home a greyhound puppy called Biscuit; the dog is already house-trained."},
	{"How are my cello lessons going?", "My cello teacher says the Bach suite I practise every evening is improving fast."},
	{"What car am I planning to buy?", "I'm saving for a second-hand electric car, probably a Nissan Leaf."},
}

// Pairs returns the built-in pairs: eight questions a user asks an
// assistant, each with the memory that answers it (related) and with the
// memory of the question four places on (unrelated), so both halves use
// the same sixteen texts.
func Pairs() []Pair {
	n := len(related)
	out := make([]Pair, 0, 2*n)
	for _, p := range related {
		out = append(out, Pair{Query: p[0], Memory: p[1], Related: true})
	}
	for i, p := range related {
		out = append(out, Pair{Query: p[0], Memory: related[(i+n/2)%n][1]})
	}
	return out
}

// Calibration is an embedder's similarity on the pairs and what it implies
// for a relevance threshold.
type Calibration struct {
	// Related and Unrelated count the pairs of each kind.
	Related   int `json:"related_pairs"`
	Unrelated int `json:"unrelated_pairs"`
	// RelatedMean and UnrelatedMean are the mean cosines; Gap their
	// difference.
	RelatedMean   float64 `json:"related_mean"`
	UnrelatedMean float64 `json:"unrelated_mean"`
	Gap           float64 `json:"gap"`
	// RelatedMin and UnrelatedMax are the worst cases.
	RelatedMin   float64 `json:"related_min"`
	UnrelatedMax float64 `json:"unrelated_max"`
	// Separation is the share of (related, unrelated) couples of pairs in
	// which the related pair is the more similar (1 is perfect, 0.5 chance).
	Separation float64 `json:"separation"`
	// Threshold is the cosine halfway between the two means: the absolute
	// cut-off this embedder's similarities imply, were one used.
	Threshold float64 `json:"threshold"`
	// Cosines are the pairs' cosines, in the order of the pairs.
	Cosines []float64 `json:"cosines"`
}

// Calibrate computes the calibration from the pairs and their cosines.
func Calibrate(pairs []Pair, cosines []float64) (*Calibration, error) {
	if len(pairs) != len(cosines) {
		return nil, fmt.Errorf("check: %d pairs, %d cosines", len(pairs), len(cosines))
	}
	c := &Calibration{RelatedMin: math.Inf(1), UnrelatedMax: math.Inf(-1), Cosines: cosines}
	var rel, unrel []float64
	for i, p := range pairs {
		if p.Related {
			rel = append(rel, cosines[i])
			c.RelatedMin = math.Min(c.RelatedMin, cosines[i])
		} else {
			unrel = append(unrel, cosines[i])
			c.UnrelatedMax = math.Max(c.UnrelatedMax, cosines[i])
		}
	}
	if len(rel) == 0 || len(unrel) == 0 {
		return nil, fmt.Errorf("check: the pairs need related and unrelated ones (%d and %d)", len(rel), len(unrel))
	}
	c.Related, c.Unrelated = len(rel), len(unrel)
	c.RelatedMean, c.UnrelatedMean = mean(rel), mean(unrel)
	c.Gap = c.RelatedMean - c.UnrelatedMean
	c.Threshold = (c.RelatedMean + c.UnrelatedMean) / 2
	ordered := 0.0
	for _, r := range rel {
		for _, u := range unrel {
			switch {
			case r > u:
				ordered++
			case r == u:
				ordered += 0.5
			}
		}
	}
	c.Separation = ordered / float64(len(rel)*len(unrel))
	for _, p := range []*float64{&c.RelatedMean, &c.UnrelatedMean, &c.Gap, &c.RelatedMin, &c.UnrelatedMax, &c.Separation, &c.Threshold} {
		*p = round3(*p)
	}
	for i := range c.Cosines {
		c.Cosines[i] = round3(c.Cosines[i])
	}
	return c, nil
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// embedding checks the embedder and measures its calibration. It returns
// the vectors of the pairs' texts (queries first) for the store's round
// trip, or none when the embedder failed.
func (c *checker) embedding(ctx context.Context, e embed.Embedder) (Section, [][]float32, *Calibration) {
	sec := Section{Name: "embedding model", Target: fmt.Sprintf("%s, %d dimensions", e.Model(), e.Dimensions())}
	var lat []time.Duration
	var got int
	for i := range c.cfg.Calls {
		var vs [][]float32
		d, err := c.call(ctx, func(ctx context.Context) error {
			var err error
			vs, err = e.Embed(ctx, []string{"A short sentence to embed."})
			return err
		})
		if err == nil && len(vs) != 1 {
			err = fmt.Errorf("asked for 1 vector, got %d", len(vs))
		}
		if err != nil {
			if i == 0 && errors.Is(err, embed.ErrDimension) {
				sec.Items = append(sec.Items,
					Item{Name: "reachable", Status: OK, Detail: "the server answered"},
					Item{Name: "latency", Status: Skip, Detail: "the vectors have the wrong length"},
					Item{Name: "dimensions", Status: Fail, Detail: errText(err) + " (check OPENAI_EMBEDDING_DIMENSIONS)"},
					Item{Name: "similarity", Status: Skip, Detail: "the vectors have the wrong length"})
				return sec, nil, nil
			}
			if i == 0 {
				sec.Items = append(sec.Items, unreachable(err, "the embedder", "latency", "dimensions", "similarity")...)
				return sec, nil, nil
			}
			break
		}
		if i == 0 {
			got = len(vs[0])
		}
		lat = append(lat, d)
	}
	sec.Items = append(sec.Items, Item{Name: "reachable", Status: OK, Detail: fmt.Sprintf("embedded a sentence in %s", fmtDuration(lat[0]))})
	sec.Items = append(sec.Items, c.latency(&sec, lat, "calls"))
	if got != e.Dimensions() {
		sec.Items = append(sec.Items, Item{Name: "dimensions", Status: Fail,
			Detail: fmt.Sprintf("vectors of %d dimensions, configured %d (OPENAI_EMBEDDING_DIMENSIONS)", got, e.Dimensions())})
	} else {
		sec.Items = append(sec.Items, Item{Name: "dimensions", Status: OK, Detail: fmt.Sprintf("vectors of %d dimensions, as configured", got)})
	}

	// One batch: the queries, then the memories.
	texts := make([]string, 0, 2*len(c.cfg.Pairs))
	for _, p := range c.cfg.Pairs {
		texts = append(texts, p.Query)
	}
	for _, p := range c.cfg.Pairs {
		texts = append(texts, p.Memory)
	}
	var vecs [][]float32
	_, err := c.call(ctx, func(ctx context.Context) error {
		var err error
		vecs, err = e.Embed(ctx, texts)
		return err
	})
	if err == nil && len(vecs) != len(texts) {
		err = fmt.Errorf("asked for %d vectors, got %d", len(texts), len(vecs))
	}
	if err != nil {
		sec.Items = append(sec.Items, Item{Name: "similarity", Status: Fail, Detail: "embedding the pairs failed: " + errText(err)})
		return sec, nil, nil
	}
	n := len(c.cfg.Pairs)
	cos := make([]float64, n)
	for i := range n {
		if len(vecs[i]) != len(vecs[n+i]) || len(vecs[i]) == 0 {
			sec.Items = append(sec.Items, Item{Name: "similarity", Status: Fail, Detail: fmt.Sprintf("vectors of different lengths (%d, %d)", len(vecs[i]), len(vecs[n+i]))})
			return sec, nil, nil
		}
		cos[i] = float64(embed.Cosine(vecs[i], vecs[n+i]))
	}
	cal, err := Calibrate(c.cfg.Pairs, cos)
	if err != nil {
		sec.Items = append(sec.Items, Item{Name: "similarity", Status: Fail, Detail: err.Error()})
		return sec, vecs, nil
	}
	detail := fmt.Sprintf("related pairs %.3f, unrelated %.3f, gap %.3f, %.0f%% ordered rightly",
		cal.RelatedMean, cal.UnrelatedMean, cal.Gap, 100*cal.Separation)
	switch {
	case cal.Gap < c.cfg.MinGap || cal.Separation < c.cfg.MinSeparation:
		sec.Items = append(sec.Items, Item{Name: "similarity", Status: Fail, Detail: detail +
			fmt.Sprintf(": the embedder barely tells an answering memory from another (want a gap of %.2f and %.0f%% ordered)", c.cfg.MinGap, 100*c.cfg.MinSeparation)})
	default:
		sec.Items = append(sec.Items, Item{Name: "similarity", Status: OK, Detail: detail})
	}
	return sec, vecs, cal
}
