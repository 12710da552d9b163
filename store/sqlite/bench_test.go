package sqlite

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmemory/agentmemory/store"
)

// Benchmark fixture: one user with n interactions of two 384-d random unit
// vectors (fixed seed) and ~60 words of content from a 2,000-word
// vocabulary with a Zipf distribution, so that full text has realistic
// postings; one session per 10 interactions.
const (
	benchDims     = 384
	benchUser     = "bench-user"
	benchVocab    = 2000
	benchWords    = 60
	benchPerSess  = 10
	benchBatch    = 2000
	benchQueries  = 64
	benchTextTerm = 3
)

var (
	benchPrefilterMin = flag.Int("bench-prefilter-min", 0, "Config.VectorPrefilterMin of the benchmark store (-1: exact scans)")
)

type benchFixture struct {
	s        *Store
	path     string
	n        int
	rng      *rand.Rand
	vocab    []string
	zipf     *rand.Zipf
	queries  []store.SearchRequest
	sessions int
}

func benchVocabulary() []string {
	cons := strings.Split("b c d f g h j k l m n p r s t v w z", " ")
	vows := strings.Split("a e i o u", " ")
	var syl []string
	for _, c := range cons {
		for _, v := range vows {
			syl = append(syl, c+v)
		}
	}
	words := make([]string, 0, benchVocab)
	for i := 0; len(words) < benchVocab; i++ {
		// Two or three syllables, deterministic.
		w := syl[i%len(syl)] + syl[(i/len(syl))%len(syl)]
		if i >= len(syl)*len(syl) {
			w += syl[(i/7)%len(syl)]
		}
		words = append(words, w+"x") // porter leaves "…x" words alone
	}
	return words
}

func (f *benchFixture) unitVector() []float32 {
	v := make([]float32, benchDims)
	var norm float64
	for i := range v {
		x := f.rng.NormFloat64()
		v[i] = float32(x)
		norm += x * x
	}
	inv := float32(1 / math.Sqrt(norm))
	for i := range v {
		v[i] *= inv
	}
	return v
}

func (f *benchFixture) text(words int) string {
	parts := make([]string, words)
	for i := range parts {
		parts[i] = f.vocab[f.zipf.Uint64()]
	}
	return strings.Join(parts, " ")
}

func (f *benchFixture) interaction(i int) *store.Interaction {
	sess := fmt.Sprintf("sess-%06d", i/benchPerSess)
	first := i%benchPerSess + 1
	return &store.Interaction{
		ID:            store.InteractionID(sess, first, first),
		SessionID:     sess,
		Timestamp:     time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute),
		FirstTurn:     first,
		LastTurn:      first,
		TurnIDs:       []string{fmt.Sprintf("m%d-u", i), fmt.Sprintf("m%d-a", i)},
		Content:       "user: " + f.text(benchWords/2) + "\nassistant: " + f.text(benchWords/2),
		ContentVector: f.unitVector(),
		Summary:       f.text(12),
		SummaryVector: f.unitVector(),
		Metadata:      store.Metadata{MentionedTopics: strings.Fields(f.text(3)), Entities: strings.Fields(f.text(2))},
	}
}

func newBenchFixture(b *testing.B, n int) *benchFixture {
	b.Helper()
	ctx := b.Context()
	f := &benchFixture{n: n, path: filepath.Join(b.TempDir(), "bench.db"), rng: rand.New(rand.NewPCG(1, 2)), vocab: benchVocabulary()}
	f.zipf = rand.NewZipf(f.rng, 1.1, 1, benchVocab-1)
	s, err := Open(ctx, f.path, Config{Dimensions: benchDims, VectorPrefilterMin: *benchPrefilterMin})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	f.s = s
	start := time.Now()
	batch := make([]*store.Interaction, 0, benchBatch)
	for i := range n {
		batch = append(batch, f.interaction(i))
		if len(batch) == benchBatch || i == n-1 {
			if err := s.putInteractions(ctx, benchUser, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	for i := 0; i*benchPerSess < n; i++ {
		ss := &store.Session{ID: fmt.Sprintf("sess-%06d", i), StartTime: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i*benchPerSess) * time.Minute),
			Status: store.SessionCompleted, Summary: f.text(20), SummaryVector: f.unitVector(), KeyTopics: strings.Fields(f.text(3))}
		if err := s.PutSession(ctx, benchUser, ss); err != nil {
			b.Fatal(err)
		}
		f.sessions++
	}
	for range benchQueries {
		// Query words from the middle of the vocabulary: neither stop-word
		// common nor absent.
		words := make([]string, benchTextTerm)
		for j := range words {
			words[j] = f.vocab[20+f.rng.IntN(400)]
		}
		f.queries = append(f.queries, store.SearchRequest{Text: strings.Join(words, " "), Vector: f.unitVector(), TopK: 5})
	}
	if _, err := s.w.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		b.Fatal(err)
	}
	b.Logf("fixture: %d interactions and %d sessions built in %v", n, f.sessions, time.Since(start).Round(time.Millisecond))
	return f
}

func (f *benchFixture) fileBytes(b *testing.B) int64 {
	var total int64
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(f.path + suffix); err == nil {
			total += fi.Size()
		}
	}
	return total
}

// measure runs op b.N times, timing each call, and reports p50 and p99.
func measure(b *testing.B, op func(i int) error) {
	b.Helper()
	durs := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		t := time.Now()
		if err := op(i); err != nil {
			b.Fatal(err)
		}
		durs = append(durs, time.Since(t))
	}
	b.StopTimer()
	slices.Sort(durs)
	b.ReportMetric(float64(durs[len(durs)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(durs[len(durs)*99/100].Nanoseconds()), "p99-ns")
}

// BenchmarkStore measures one user's store at 1,000, 10,000 and 100,000
// interactions. The 100,000 fixture (about 10 s to build) is skipped with
// -short.
//
//	go test -run '^$' -bench . -benchmem ./store/sqlite
func BenchmarkStore(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			if n > 10_000 && testing.Short() {
				b.Skip("100,000-document fixture skipped with -short")
			}
			f := newBenchFixture(b, n)
			ctx := b.Context()
			b.Run("HybridSearch", func(b *testing.B) {
				if _, err := f.s.SearchInteractions(ctx, benchUser, f.queries[0]); err != nil { // loads the vector cache
					b.Fatal(err)
				}
				measure(b, func(i int) error {
					hits, err := f.s.SearchInteractions(ctx, benchUser, f.queries[i%benchQueries])
					if err == nil && len(hits) != 5 {
						err = fmt.Errorf("%d hits", len(hits))
					}
					return err
				})
				b.ReportMetric(float64(f.fileBytes(b))*10_000/float64(f.n), "file-bytes/10k-docs")
				_, cached := f.s.cache.stats()
				b.ReportMetric(float64(cached)*10_000/float64(f.n), "cache-bytes/10k-docs")
			})
			b.Run("VectorSearch", func(b *testing.B) {
				measure(b, func(i int) error {
					q := f.queries[i%benchQueries]
					q.Text = ""
					_, err := f.s.SearchInteractions(ctx, benchUser, q)
					return err
				})
			})
			b.Run("VectorSearchContentOnly", func(b *testing.B) {
				measure(b, func(i int) error {
					q := f.queries[i%benchQueries]
					q.Text, q.VectorFields = "", []store.VectorField{store.FieldContentVector}
					_, err := f.s.SearchInteractions(ctx, benchUser, q)
					return err
				})
			})
			b.Run("TextSearch", func(b *testing.B) {
				measure(b, func(i int) error {
					q := f.queries[i%benchQueries]
					q.Vector = nil
					_, err := f.s.SearchInteractions(ctx, benchUser, q)
					return err
				})
			})
			b.Run("PutInteraction", func(b *testing.B) {
				next := f.n
				measure(b, func(int) error {
					in := f.interaction(next)
					next++
					return f.s.PutInteraction(ctx, benchUser, in)
				})
				f.n = next
			})
			b.Run("ListSessionsRecent2", func(b *testing.B) {
				measure(b, func(int) error {
					ss, err := f.s.ListSessions(ctx, benchUser, store.SessionFilter{Limit: 2})
					if err == nil && len(ss) != 2 {
						err = fmt.Errorf("%d sessions", len(ss))
					}
					return err
				})
			})
			b.Run("ListInteractionsOfSession", func(b *testing.B) {
				measure(b, func(i int) error {
					sess := fmt.Sprintf("sess-%06d", (i*7919)%f.sessions)
					ints, err := f.s.ListInteractions(ctx, benchUser, store.InteractionFilter{SessionID: sess})
					if err == nil && len(ints) == 0 {
						err = fmt.Errorf("session %s empty", sess)
					}
					return err
				})
			})
		})
	}
}
