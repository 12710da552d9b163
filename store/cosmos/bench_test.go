package cosmos

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/storetest"
)

// reportStats reports requests and request units per operation since
// before.
func reportStats(b *testing.B, s *Store, before Stats) {
	b.Helper()
	after, was := s.Stats().Total(), before.Total()
	b.ReportMetric(float64(after.Requests-was.Requests)/float64(b.N), "requests/op")
	b.ReportMetric((after.RequestCharge-was.RequestCharge)/float64(b.N), "RU/op")
}

func BenchmarkPointRead(b *testing.B) {
	s := openLauncher(b, nil)
	ctx := b.Context()
	require.NoError(b, s.PutSession(ctx, "alice", benchSession()))
	before := s.Stats()
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.GetSession(ctx, "alice", "s1"); err != nil {
			b.Fatal(err)
		}
	}
	reportStats(b, s, before)
}

func BenchmarkSessionStateWrite(b *testing.B) {
	s := openLauncher(b, nil)
	ctx := b.Context()
	doc := benchSession()
	require.NoError(b, s.PutSession(ctx, "alice", doc))
	before := s.Stats()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		// The keeper's write: the next turn, conditional on the last ETag.
		doc.State.TurnCounter++
		doc.State.Turns = append(doc.State.Turns[:0], store.Turn{Seq: doc.State.TurnCounter, Time: time.Now(),
			Messages: []store.TurnMessage{{ID: fmt.Sprint("m", i), Role: "user", Content: "How much should I put into my Roth IRA this year?"}}})
		if err := s.PutSession(ctx, "alice", doc); err != nil {
			b.Fatal(err)
		}
	}
	reportStats(b, s, before)
}

// putBenchCorpus writes 200 interactions of the financial-advice kind:
// every one holds "plan", most "retirement" or "ira".
func putBenchCorpus(b *testing.B, s *Store, rng *rand.Rand) {
	b.Helper()
	topics := []string{"retirement", "ira", "bonds", "mortgage", "budget", "taxes", "college", "insurance", "stocks", "savings"}
	const docs = 200
	for i := range docs {
		d := &store.Interaction{
			ID: fmt.Sprint("int-", i), SessionID: fmt.Sprint("s", i/10), Timestamp: time.Unix(int64(i)*3600, 0),
			FirstTurn: 1, LastTurn: 2,
			Content: fmt.Sprintf("user: tell me about %s and %s\nassistant: here is a plan for %s with %d steps",
				topics[rng.IntN(len(topics))], topics[rng.IntN(len(topics))], topics[rng.IntN(len(topics))], i),
			ContentVector: randVec(rng), SummaryVector: randVec(rng),
			Summary:  "the user asked about " + topics[i%len(topics)],
			Metadata: store.Metadata{MentionedTopics: []string{topics[i%len(topics)]}, Entities: []string{"Vanguard"}},
		}
		require.NoError(b, s.PutInteraction(b.Context(), "alice", d))
	}
}

func BenchmarkHybridSearch(b *testing.B) {
	s := openLauncher(b, nil)
	ctx := b.Context()
	rng := rand.New(rand.NewPCG(1, 2))
	putBenchCorpus(b, s, rng)
	q := store.SearchRequest{Text: "roth ira retirement plan", Vector: randVec(rng), TopK: 5}
	before := s.Stats()
	b.ResetTimer()
	for b.Loop() {
		hits, err := s.SearchInteractions(ctx, "alice", q)
		if err != nil || len(hits) != 5 {
			b.Fatal(len(hits), err)
		}
	}
	reportStats(b, s, before)
}

// BenchmarkTextSearch is a full-text search over 200 matching
// interactions, with every candidate read (under the cap) and with
// MaxTextCandidates 50 (past the cap: the best 50 are read).
func BenchmarkTextSearch(b *testing.B) {
	for _, c := range []struct {
		name string
		max  int
	}{{"under-cap", 0}, {"past-cap", 50}} {
		b.Run(c.name, func(b *testing.B) {
			s := openLauncher(b, func(cfg *Config) { cfg.MaxTextCandidates = c.max })
			ctx := b.Context()
			putBenchCorpus(b, s, rand.New(rand.NewPCG(1, 2)))
			q := store.SearchRequest{Text: "roth ira retirement plan", TopK: 5}
			before := s.Stats()
			b.ResetTimer()
			for b.Loop() {
				hits, err := s.SearchInteractions(ctx, "alice", q)
				if err != nil || len(hits) != 5 {
					b.Fatal(len(hits), err)
				}
			}
			reportStats(b, s, before)
		})
	}
}

func benchSession() *store.Session {
	return &store.Session{ID: "s1", StartTime: time.Now(), Summary: "a session",
		State: store.SessionState{CumulativeSummary: "The user is 42 and saving for retirement."}}
}

func randVec(rng *rand.Rand) []float32 {
	v := make([]float32, storetest.Dimensions)
	for i := range v {
		v[i] = rng.Float32()*2 - 1
	}
	return v
}
