package retrieval_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/internal/affine"
	"github.com/agentmemory/agentmemory/retrieval"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// benchVocabulary is the word pool of the generated conversations: a
// Zipf-like draw over it gives common and rare words, as in real chat.
var benchVocabulary = strings.Fields(`retirement savings budget mortgage house rent salary bonus pension
401k roth ira index fund bond stock dividend portfolio risk volatility market crash inflation
interest rate loan debt credit card student tuition college daughter son wife husband parents
vacation travel hawaii japan car insurance health dentist doctor surgery baby wedding divorce
job promotion startup business freelance taxes refund deduction charity donation emergency cash
checking account bank fidelity vanguard schwab crypto bitcoin gold real estate rental property
garden dog cat piano guitar marathon running yoga cooking painting pottery camping hiking book
movie concert friend birthday anniversary holiday christmas summer winter spring autumn weekend
nervous excited worried happy plan goal review quarter monthly yearly deadline target allocation`)

const (
	benchUser         = "bench-user"
	benchInteractions = 10_000
	benchTurns        = 10
)

// benchStore writes benchUser's 10,000 interactions (ten "speaker: text"
// lines each, summary, topics, entities, and unless emb is lexical its
// content and summary vectors), one a day from 2000 on, into a new SQLite
// file.
func benchStore(b *testing.B, emb embed.Embedder) *sqlite.Store {
	b.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), sqlite.Config{Dimensions: emb.Dimensions()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := func() string {
		// Inverse-rank draw: word i with probability ~ 1/(i+1).
		x := rng.Float64()
		i := int(float64(len(benchVocabulary))*x*x*x) % len(benchVocabulary)
		return benchVocabulary[i]
	}
	sentence := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = zipf()
		}
		return strings.Join(w, " ")
	}
	start := time.Date(2000, 1, 1, 10, 0, 0, 0, time.UTC)
	const batch = 256
	for lo := 0; lo < benchInteractions; lo += batch {
		hi := min(lo+batch, benchInteractions)
		docs := make([]*store.Interaction, 0, hi-lo)
		var texts []string
		for i := lo; i < hi; i++ {
			session := fmt.Sprintf("s%d", i/3)
			first := i%3*benchTurns + 1
			var lines, ids []string
			for t := range benchTurns {
				who := "user"
				if t%2 == 1 {
					who = "assistant"
				}
				lines = append(lines, who+": "+sentence(8+rng.IntN(12)))
				ids = append(ids, fmt.Sprintf("%s-%d", session, first+t))
			}
			d := &store.Interaction{
				ID: store.InteractionID(session, first, first+benchTurns-1), SessionID: session,
				Timestamp: start.AddDate(0, 0, i), FirstTurn: first, LastTurn: first + benchTurns - 1,
				TurnIDs: ids, Content: strings.Join(lines, "\n"), Summary: sentence(20),
				Metadata:       store.Metadata{MentionedTopics: []string{zipf(), zipf(), zipf()}, Entities: []string{zipf()}},
				EmbeddingModel: emb.Model(),
			}
			docs = append(docs, d)
			texts = append(texts, d.Content, d.Summary)
		}
		// As the keeper: a lexical embedder's vectors are not stored.
		vecs := make([][]float32, len(texts))
		if !embed.IsLexical(emb) {
			if vecs, err = emb.Embed(ctx, texts); err != nil {
				b.Fatal(err)
			}
		}
		for j, d := range docs {
			d.ContentVector, d.SummaryVector = vecs[2*j], vecs[2*j+1]
			if err := st.PutInteraction(ctx, benchUser, d); err != nil {
				b.Fatal(err)
			}
		}
	}
	return st
}

// BenchmarkDirectSearch measures direct-mode retrieval (Retriever.Search,
// all kinds, default configuration) for a user with 10,000 interactions on
// the embedded SQLite store: with the lexical embedder (full text only: its
// vectors are not searched) and with a vector leg (the lexical vectors
// behind internal/affine, cosines mapped to text-embedding-3's range).
// Besides the mean (ns/op) it reports the p50 and p95 latency of the runs
// in ms.
func BenchmarkDirectSearch(b *testing.B) {
	lex, err := lexical.New(lexical.Config{})
	if err != nil {
		b.Fatal(err)
	}
	shifted, err := affine.New(lex, 0.15)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range []struct {
		name string
		emb  embed.Embedder
	}{{"lexical", lex}, {"vector-leg", shifted}} {
		b.Run(e.name, func(b *testing.B) { benchDirectSearch(b, e.emb) })
	}
}

func benchDirectSearch(b *testing.B, emb embed.Embedder) {
	st := benchStore(b, emb)
	r, err := retrieval.New(st, retrieval.Config{Embedder: emb})
	if err != nil {
		b.Fatal(err)
	}
	queries := []string{
		"What did I say about my roth ira and the index fund?",
		"How is the mortgage on the rental property going?",
		"When did we talk about the daughter's college tuition?",
		"Which bank holds my emergency cash?",
		"What was my plan for the vacation in japan?",
		"Am I worried about inflation and the market crash?",
		"What did we decide about taxes in March 2010?",
		"What did I decide about crypto on 14 June, 2015?",
	}
	ctx := context.Background()
	// The store's own hybrid search of the same queries, for reference: what
	// direct mode adds on top of it.
	b.Run(fmt.Sprintf("interactions=%d,store-hybrid-only", benchInteractions), func(b *testing.B) {
		reqs := make([]store.SearchRequest, len(queries))
		for i, q := range queries {
			v, err := emb.Embed(ctx, []string{q})
			if err != nil {
				b.Fatal(err)
			}
			reqs[i] = store.SearchRequest{Text: q, Vector: v[0], TopK: retrieval.DefaultCandidates, MinSimilarity: -1}
		}
		benchLoop(b, len(reqs), func(i int) error {
			_, err := st.SearchInteractions(ctx, benchUser, reqs[i%len(reqs)])
			return err
		})
	})
	for _, k := range []int{5, 10} {
		b.Run(fmt.Sprintf("interactions=%d,k=%d", benchInteractions, k), func(b *testing.B) {
			benchLoop(b, len(queries), func(i int) error {
				ms, err := r.Search(ctx, benchUser, queries[i%len(queries)], retrieval.SearchOptions{TopK: k})
				if err == nil && len(ms) != k {
					err = fmt.Errorf("%d memories, want %d", len(ms), k)
				}
				return err
			})
		})
	}
}

// benchLoop calls op(0..warm-1) once to warm the store's caches, as in a
// serving process, then times each call of op and reports the p50 and p95
// in ms.
func benchLoop(b *testing.B, warm int, op func(i int) error) {
	for i := range warm {
		if err := op(i); err != nil {
			b.Fatal(err)
		}
	}
	var lat []time.Duration
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		err := op(i)
		lat = append(lat, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
	}
	slices.Sort(lat)
	pct := func(p int) float64 {
		return float64(lat[min(len(lat)-1, (len(lat)*p+99)/100-1)]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(50), "p50-ms")
	b.ReportMetric(pct(95), "p95-ms")
}
