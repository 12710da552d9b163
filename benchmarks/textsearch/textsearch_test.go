package textsearch

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/porter"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/agentmemory/agentmemory/internal/locomocorpus"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

const (
	user   = "bench-user"
	topK   = 5
	perDoc = locomocorpus.DefaultPerDocument
	// fts5Like is the name of the analyzer close to FTS5's porter unicode61.
	fts5Like = "fts5_like"
)

func corpus(tb testing.TB) *locomocorpus.Corpus {
	tb.Helper()
	c, err := locomocorpus.FromEnv()
	if errors.Is(err, locomocorpus.ErrNoData) {
		tb.Skip("skipped: set " + locomocorpus.EnvDir + " to a directory of LoCoMo JSON files")
	}
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func docID(i int) string { return fmt.Sprintf("doc-%06d", i) }

// engine answers a query with the ids of its top topK documents.
type engine func(q string) ([]string, error)

// openAgentmemory stores the documents as one user's interactions.
func openAgentmemory(tb testing.TB, docs []string) engine {
	tb.Helper()
	ctx := tb.Context()
	s, err := sqlite.Open(ctx, filepath.Join(tb.TempDir(), "am.db"), sqlite.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	for i, text := range docs {
		sess := fmt.Sprintf("sess-%05d", i/10)
		first := i%10*perDoc + 1
		d := &store.Interaction{ID: docID(i), SessionID: sess, FirstTurn: first, LastTurn: first + perDoc - 1,
			Timestamp: time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute), Content: text}
		if err := s.PutInteraction(ctx, user, d); err != nil {
			tb.Fatal(err)
		}
	}
	return func(q string) ([]string, error) {
		hits, err := s.SearchInteractions(ctx, user, store.SearchRequest{Text: q, TopK: topK})
		ids := make([]string, len(hits))
		for i, h := range hits {
			ids[i] = h.Doc.ID
		}
		return ids, err
	}
}

// openBleve indexes the documents' text in a bleve scorch index scored by
// BM25, analysed by the named analyzer.
func openBleve(tb testing.TB, docs []string, analyzer string) engine {
	tb.Helper()
	m := bleve.NewIndexMapping()
	if err := m.AddCustomAnalyzer(fts5Like, map[string]any{
		"type":          custom.Name,
		"tokenizer":     unicode.Name,
		"token_filters": []string{lowercase.Name, porter.Name},
	}); err != nil {
		tb.Fatal(err)
	}
	m.ScoringModel = index.BM25Scoring
	m.DefaultAnalyzer = analyzer
	field := mapping.NewTextFieldMapping()
	field.Analyzer = analyzer
	field.Store = false
	field.IncludeTermVectors = false
	dm := mapping.NewDocumentMapping()
	dm.AddFieldMappingsAt("content", field)
	m.DefaultMapping = dm
	idx, err := bleve.New(filepath.Join(tb.TempDir(), "bleve"), m)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { idx.Close() })
	b := idx.NewBatch()
	for i, text := range docs {
		if err := b.Index(docID(i), map[string]string{"content": text}); err != nil {
			tb.Fatal(err)
		}
		if b.Size() == 1000 || i == len(docs)-1 {
			if err := idx.Batch(b); err != nil {
				tb.Fatal(err)
			}
			b.Reset()
		}
	}
	return func(q string) ([]string, error) {
		mq := bleve.NewMatchQuery(q)
		mq.SetField("content")
		req := bleve.NewSearchRequestOptions(mq, topK, 0, false)
		res, err := idx.Search(req)
		if err != nil {
			return nil, err
		}
		ids := make([]string, len(res.Hits))
		for i, h := range res.Hits {
			ids[i] = h.ID
		}
		return ids, nil
	}
}

// measure runs one query per iteration (the questions in turn) and reports
// the p50 and p95 of a search.
func measure(b *testing.B, queries []string, e engine) {
	b.Helper()
	if _, err := e(queries[0]); err != nil { // warms caches
		b.Fatal(err)
	}
	runtime.GC() // the build's and the warm-up's garbage is no search's cost
	durs := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		t := time.Now()
		if _, err := e(queries[i%len(queries)]); err != nil {
			b.Fatal(err)
		}
		durs = append(durs, time.Since(t))
	}
	b.StopTimer()
	slices.Sort(durs)
	b.ReportMetric(float64(durs[len(durs)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(durs[len(durs)*95/100].Microseconds())/1000, "p95-ms")
}

// overlap is the mean share of ref's top ids that e also returns, over the
// first n queries.
func overlap(tb testing.TB, queries []string, ref, e engine, n int) float64 {
	tb.Helper()
	var sum float64
	counted := 0
	for _, q := range queries[:min(n, len(queries))] {
		want, err := ref(q)
		if err != nil {
			tb.Fatal(err)
		}
		got, err := e(q)
		if err != nil {
			tb.Fatal(err)
		}
		if len(want) == 0 {
			continue
		}
		both := 0
		for _, id := range want {
			if slices.Contains(got, id) {
				both++
			}
		}
		sum += float64(both) / float64(len(want))
		counted++
	}
	if counted == 0 {
		return 0
	}
	return sum / float64(counted)
}

// BenchmarkTextSearch compares the engines' top-5 search on LoCoMo
// questions at 1,000, 10,000 and (unless -short) 100,000 documents.
func BenchmarkTextSearch(b *testing.B) {
	c := corpus(b)
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			if n > 10_000 && testing.Short() {
				b.Skip("100,000 documents skipped with -short")
			}
			docs := c.Documents(n, perDoc, 0)
			am := openAgentmemory(b, docs)
			b.Run("agentmemory", func(b *testing.B) { measure(b, c.Questions, am) })
			for _, a := range []struct{ name, analyzer string }{{"bleve-en", en.AnalyzerName}, {"bleve-fts5", fts5Like}} {
				e := openBleve(b, docs, a.analyzer)
				b.Run(a.name, func(b *testing.B) {
					measure(b, c.Questions, e)
					b.ReportMetric(overlap(b, c.Questions, am, e, 200), "overlap")
				})
			}
		})
	}
}

// TestEnginesAgree checks, on 1,000 documents, that the harness measures
// engines answering the same questions: every engine finds documents for
// nearly every question, and bleve with the FTS5-like analyzer returns
// most of agentmemory's top 5.
func TestEnginesAgree(t *testing.T) {
	c := corpus(t)
	docs := c.Documents(1_000, perDoc, 0)
	am := openAgentmemory(t, docs)
	fts := openBleve(t, docs, fts5Like)
	en := openBleve(t, docs, en.AnalyzerName)
	for name, e := range map[string]engine{"agentmemory": am, "bleve-fts5": fts, "bleve-en": en} {
		empty := 0
		for _, q := range c.Questions[:200] {
			ids, err := e(q)
			if err != nil {
				t.Fatal(err)
			}
			if len(ids) == 0 {
				empty++
			}
		}
		if empty > 4 {
			t.Errorf("%s: %d of 200 questions found nothing", name, empty)
		}
	}
	ov := overlap(t, c.Questions, am, fts, 200)
	t.Logf("bleve-fts5 returns %.0f%% of agentmemory's top 5", 100*ov)
	if ov < 0.5 {
		t.Errorf("bleve-fts5 returns only %.0f%% of agentmemory's top 5: the engines do not answer alike", 100*ov)
	}
}
