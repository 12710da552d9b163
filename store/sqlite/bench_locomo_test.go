package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/internal/locomocorpus"
	"github.com/agentmemory/agentmemory/store"
)

// Search on natural questions: documents of 10 LoCoMo messages (replicated
// with variations, see locomocorpus), LoCoMo questions as queries, vectors
// from the offline lexical embedder. They need the LoCoMo files:
//
//	AGENTMEMORY_LOCOMO_DIR=DIR go test -run '^$' -bench LoCoMo -cpu 1 -count 5 ./store/sqlite
//
// and skip without them. The many-user files (a million documents each,
// several minutes to build) are built only with
// AGENTMEMORY_BENCH_MANY_USERS=1; with AGENTMEMORY_BENCH_DIR=DIR the
// fixture files are kept in DIR and reused by later runs.

const locomoBenchPerDoc = 10

// locomoBench is what the LoCoMo benchmarks share: the corpus, the
// embedder and the queries (each question with its vector).
type locomoBench struct {
	corpus  *locomocorpus.Corpus
	emb     *lexical.Embedder
	queries []store.SearchRequest
}

func newLoCoMoBench(b *testing.B) *locomoBench {
	b.Helper()
	c, err := locomocorpus.FromEnv()
	if errors.Is(err, locomocorpus.ErrNoData) {
		b.Skip("skipped: set " + locomocorpus.EnvDir + " to a directory of LoCoMo JSON files to run the LoCoMo benchmarks")
	}
	if err != nil {
		b.Fatal(err)
	}
	emb, err := lexical.New(lexical.Config{})
	if err != nil {
		b.Fatal(err)
	}
	vecs, err := emb.Embed(b.Context(), c.Questions)
	if err != nil {
		b.Fatal(err)
	}
	lb := &locomoBench{corpus: c, emb: emb}
	for i, q := range c.Questions {
		lb.queries = append(lb.queries, store.SearchRequest{Text: q, Vector: vecs[i], TopK: 5})
	}
	return lb
}

// firstReplica is the first replica of user u's documents when each user
// holds docs documents: users hold distinct documents.
func (lb *locomoBench) firstReplica(u, docs int) int {
	perReplica := 0
	for _, m := range lb.corpus.Conversations {
		perReplica += (len(m) + locomoBenchPerDoc - 1) / locomoBenchPerDoc
	}
	return u * (docs/max(perReplica-locomoBenchPerDoc, 1) + 1)
}

func locomoUser(u int) string { return fmt.Sprintf("user-%05d", u) }

// open returns a store on a file holding users[i] documents for each of the
// users listed (user indexes), building it unless AGENTMEMORY_BENCH_DIR
// already holds it.
func (lb *locomoBench) open(b *testing.B, name string, users []int, docs int) *Store {
	b.Helper()
	ctx := b.Context()
	dir := os.Getenv("AGENTMEMORY_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	path := filepath.Join(dir, name+".db")
	s, err := Open(ctx, path, Config{Dimensions: lb.emb.Dimensions()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	last := locomoUser(users[len(users)-1])
	var have int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM interactions WHERE user_id = ?`, last).Scan(&have); err != nil {
		b.Fatal(err)
	}
	if have == docs {
		b.Logf("fixture %s reused", path)
		return s
	}
	start := time.Now()
	for _, u := range users {
		if err := lb.fill(ctx, s, u, docs); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := s.w.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		b.Fatal(err)
	}
	b.Logf("fixture %s: %d users × %d documents built in %v", name, len(users), docs, time.Since(start).Round(time.Second))
	return s
}

// fill writes user u's docs documents.
func (lb *locomoBench) fill(ctx context.Context, s *Store, u, docs int) error {
	user := locomoUser(u)
	texts := lb.corpus.Documents(docs, locomoBenchPerDoc, lb.firstReplica(u, docs))
	const batch = 2000
	for lo := 0; lo < len(texts); lo += batch {
		part := texts[lo:min(lo+batch, len(texts))]
		vecs, err := lb.emb.Embed(ctx, part)
		if err != nil {
			return err
		}
		ds := make([]*store.Interaction, len(part))
		for i, text := range part {
			n := lo + i
			sess := fmt.Sprintf("sess-%06d", n/10)
			first := n%10*locomoBenchPerDoc + 1
			ds[i] = &store.Interaction{
				ID:            store.InteractionID(sess, first, first+locomoBenchPerDoc-1),
				SessionID:     sess,
				Timestamp:     time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Minute),
				FirstTurn:     first,
				LastTurn:      first + locomoBenchPerDoc - 1,
				Content:       text,
				ContentVector: vecs[i],
			}
		}
		if err := s.putInteractions(ctx, user, ds); err != nil {
			return err
		}
	}
	return nil
}

// searchQuantiles runs one search per iteration (questions in turn) and
// reports the p50 and p95 of a search.
func (lb *locomoBench) searchQuantiles(b *testing.B, s *Store, user string, text bool) {
	b.Helper()
	ctx := b.Context()
	req := func(i int) store.SearchRequest {
		q := lb.queries[i%len(lb.queries)]
		if text {
			q.Vector = nil
		}
		return q
	}
	if _, err := s.SearchInteractions(ctx, user, req(0)); err != nil { // loads the user's cached set
		b.Fatal(err)
	}
	runtime.GC() // the load's garbage is no search's cost
	durs := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		t := time.Now()
		if _, err := s.SearchInteractions(ctx, user, req(i)); err != nil {
			b.Fatal(err)
		}
		durs = append(durs, time.Since(t))
	}
	b.StopTimer()
	slices.Sort(durs)
	b.ReportMetric(float64(durs[len(durs)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(durs[len(durs)*95/100].Microseconds())/1000, "p95-ms")
}

// BenchmarkLoCoMoSearch measures one user's search (top 5) on LoCoMo
// questions at 1,000, 10,000 and 100,000 interactions: Text is the text
// leg alone (no query vector), Hybrid both legs fused. The 100,000 fixture
// is skipped with -short.
func BenchmarkLoCoMoSearch(b *testing.B) {
	lb := newLoCoMoBench(b)
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			if n > 10_000 && testing.Short() {
				b.Skip("100,000-document fixture skipped with -short")
			}
			s := lb.open(b, fmt.Sprintf("locomo-u1-d%d", n), []int{0}, n)
			b.Run("Text", func(b *testing.B) { lb.searchQuantiles(b, s, locomoUser(0), true) })
			b.Run("Hybrid", func(b *testing.B) { lb.searchQuantiles(b, s, locomoUser(0), false) })
		})
	}
}

// BenchmarkLoCoMoManyUsers measures one user's search in a file shared
// with many others against the same user alone in a file: 1,000 users ×
// 1,000 interactions, and 10 users × 100,000. Only with
// AGENTMEMORY_BENCH_MANY_USERS=1 (building a file takes minutes).
func BenchmarkLoCoMoManyUsers(b *testing.B) {
	if os.Getenv("AGENTMEMORY_BENCH_MANY_USERS") == "" {
		b.Skip("skipped: set AGENTMEMORY_BENCH_MANY_USERS=1 to build the million-document files (minutes; AGENTMEMORY_BENCH_DIR keeps them)")
	}
	lb := newLoCoMoBench(b)
	for _, c := range []struct{ users, docs int }{{1_000, 1_000}, {10, 100_000}} {
		b.Run(fmt.Sprintf("users=%d/docs=%d", c.users, c.docs), func(b *testing.B) {
			all := make([]int, c.users)
			for i := range all {
				all[i] = i
			}
			shared := lb.open(b, fmt.Sprintf("locomo-u%d-d%d", c.users, c.docs), all, c.docs)
			alone := lb.open(b, fmt.Sprintf("locomo-u1-d%d", c.docs), []int{0}, c.docs)
			for _, f := range []struct {
				name string
				s    *Store
			}{{"shared", shared}, {"alone", alone}} {
				b.Run("file="+f.name+"/Text", func(b *testing.B) { lb.searchQuantiles(b, f.s, locomoUser(0), true) })
				b.Run("file="+f.name+"/Hybrid", func(b *testing.B) { lb.searchQuantiles(b, f.s, locomoUser(0), false) })
			}
		})
	}
}
