package sqlite

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/internal/locomocorpus"
	"github.com/agentmemory/agentmemory/store"
)

// BenchmarkColdLoad measures a user's first set load after the store is
// opened (what the first search of a process waits for), per document
// kind, at 10,000 and 100,000 documents (100,000 skipped with -short):
//
//	AGENTMEMORY_LOCOMO_DIR=DIR go test -run '^$' -bench ColdLoad -benchmem -cpu 1 -count 5 ./store/sqlite
//
// Documents are 10 LoCoMo messages each (locomocorpus) when
// AGENTMEMORY_LOCOMO_DIR is set, else the synthetic Zipf text of
// BenchmarkStore; vectors come from the lexical embedder (384
// dimensions, one vector field). Besides the time it reports the set's
// size as the cache accounts it (cache-B/doc) and the heap the loaded set
// holds, measured with runtime.MemStats (heap-B/doc). With
// AGENTMEMORY_BENCH_DIR=DIR the fixture files are kept and reused.
func BenchmarkColdLoad(b *testing.B) {
	texts := coldLoadTexts(b)
	emb, err := lexical.New(lexical.Config{})
	if err != nil {
		b.Fatal(err)
	}
	for _, kind := range store.Kinds {
		for _, n := range []int{10_000, 100_000} {
			b.Run(fmt.Sprintf("kind=%s/docs=%d", kind, n), func(b *testing.B) {
				if n > 10_000 && testing.Short() {
					b.Skip("100,000-document fixture skipped with -short")
				}
				path := coldLoadFixture(b, texts, emb, kind, n)
				coldLoad(b, path, kind, n)
			})
		}
	}
}

// coldLoadTexts returns a source of document texts: the i-th of n.
func coldLoadTexts(b *testing.B) func(n int) []string {
	c, err := locomocorpus.FromEnv()
	if errors.Is(err, locomocorpus.ErrNoData) {
		b.Log("synthetic text: set " + locomocorpus.EnvDir + " for LoCoMo documents")
		return func(n int) []string {
			f := &benchFixture{rng: rand.New(rand.NewPCG(1, 2)), vocab: benchVocabulary()}
			f.zipf = rand.NewZipf(f.rng, 1.1, 1, benchVocab-1)
			out := make([]string, n)
			for i := range out {
				out[i] = f.text(benchWords * 2)
			}
			return out
		}
	}
	if err != nil {
		b.Fatal(err)
	}
	return func(n int) []string { return c.Documents(n, locomoBenchPerDoc, 0) }
}

// coldLoadFixture returns the path of a file holding n documents of kind
// for benchUser, building it unless AGENTMEMORY_BENCH_DIR holds it.
func coldLoadFixture(b *testing.B, texts func(int) []string, emb *lexical.Embedder, kind store.Kind, n int) string {
	b.Helper()
	ctx := b.Context()
	dir := os.Getenv("AGENTMEMORY_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	path := filepath.Join(dir, fmt.Sprintf("coldload-%s-%d.db", kind, n))
	s, err := Open(ctx, path, Config{Dimensions: emb.Dimensions()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	sp, _ := specOf(kind)
	var have int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM `+sp.table+` WHERE user_id = ?`, benchUser).Scan(&have); err != nil {
		b.Fatal(err)
	}
	if have == n {
		return path
	}
	start := time.Now()
	all := texts(n)
	const batch = 2000
	for lo := 0; lo < n; lo += batch {
		part := all[lo:min(lo+batch, n)]
		vecs, err := emb.Embed(ctx, part)
		if err != nil {
			b.Fatal(err)
		}
		if err := putBatch(ctx, s, kind, lo, part, vecs); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := s.w.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		b.Fatal(err)
	}
	b.Logf("fixture %s built in %v", path, time.Since(start).Round(time.Second))
	return path
}

// putBatch writes documents lo, lo+1, … of kind with the given texts and
// vectors in one transaction.
func putBatch(ctx context.Context, s *Store, kind store.Kind, lo int, texts []string, vecs [][]float32) error {
	at := func(i int) time.Time {
		return time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
	}
	switch kind {
	case store.KindInteraction:
		ds := make([]*store.Interaction, len(texts))
		for i, text := range texts {
			n := lo + i
			sess := fmt.Sprintf("sess-%06d", n/10)
			first := n%10*locomoBenchPerDoc + 1
			ds[i] = &store.Interaction{ID: store.InteractionID(sess, first, first+locomoBenchPerDoc-1), SessionID: sess,
				Timestamp: at(n), FirstTurn: first, LastTurn: first + locomoBenchPerDoc - 1, Content: text, ContentVector: vecs[i]}
		}
		return s.putInteractions(ctx, benchUser, ds)
	case store.KindInsight:
		return s.write(ctx, "bench insights", benchUser, func(tx *writeTx) ([]change, error) {
			var cs []change
			for i, text := range texts {
				n := lo + i
				d := &store.Insight{ID: fmt.Sprintf("ins-%07d", n), InsightType: store.InsightSession, InsightText: text,
					SessionIDs: []string{fmt.Sprintf("sess-%06d", n/10)}, CreatedAt: at(n), ContentHash: fmt.Sprintf("h%d", n),
					InsightVector: vecs[i]}
				if err := s.v.Insight(benchUser, d); err != nil {
					return nil, err
				}
				js, err := encodeInsight(d)
				if err != nil {
					return nil, err
				}
				if err := upsertInsight(ctx, tx, benchUser, d, js); err != nil {
					return nil, err
				}
				cs = append(cs, insightChange(d))
			}
			return cs, nil
		})
	default:
		return s.write(ctx, "bench sessions", benchUser, func(tx *writeTx) ([]change, error) {
			var cs []change
			for i, text := range texts {
				n := lo + i
				d := &store.Session{ID: fmt.Sprintf("sess-%07d", n), StartTime: at(n), Status: store.SessionCompleted,
					Summary: text, KeyTopics: strings.Fields(text)[:3], SummaryVector: vecs[i]}
				if err := s.v.Session(benchUser, d); err != nil {
					return nil, err
				}
				js, err := encodeSession(d)
				if err != nil {
					return nil, err
				}
				if _, err := tx.ExecContext(ctx, sessionUpsert, benchUser, d.ID, timeKey(d.StartTime), string(d.Status),
					string(d.ReflectionStatus), "etag", encodeVector(d.SummaryVector), js); err != nil {
					return nil, err
				}
				cs = append(cs, sessionChange(d))
			}
			return cs, nil
		})
	}
}

// coldLoad times the first set load of a freshly opened store on path,
// as a search starts it (loadShared), once per iteration.
func coldLoad(b *testing.B, path string, kind store.Kind, n int) {
	b.Helper()
	sp, _ := specOf(kind)
	key := cacheKey{benchUser, kind}
	var set *vecSet
	var heap uint64
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		s, err := Open(b.Context(), path, Config{})
		if err != nil {
			b.Fatal(err)
		}
		set = nil
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		b.StartTimer()
		l := s.loadShared(key, sp)
		<-l.done
		b.StopTimer()
		if l.err != nil {
			b.Fatal(l.err)
		}
		set = l.set
		if len(set.rows) != n {
			b.Fatalf("loaded %d rows, want %d", len(set.rows), n)
		}
		s.cache.clear()
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		heap = after.HeapAlloc - before.HeapAlloc
		runtime.KeepAlive(set)
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(set.size())/float64(n), "cache-B/doc")
	b.ReportMetric(float64(heap)/float64(n), "heap-B/doc")
}
