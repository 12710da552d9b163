package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// BenchmarkConcurrentWrites measures small durable writes from 1, 8 and 32
// goroutines at once, each its own user: a turn appended, then a
// conditional user-state write (the pattern of a memory service's accept).
// It reports writes per second and the 50th and 95th percentile latency
// of one write.
func BenchmarkConcurrentWrites(b *testing.B) {
	for _, writers := range []int{1, 8, 32} {
		b.Run(fmt.Sprint("writers=", writers), func(b *testing.B) {
			ctx := context.Background()
			s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "w.db"), sqlite.Config{Dimensions: dims})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			lat := make([]time.Duration, b.N)
			var wg sync.WaitGroup
			b.ResetTimer()
			begin := time.Now()
			for w := range writers {
				wg.Go(func() {
					user := fmt.Sprint("writer-", w)
					state := &store.UserState{}
					for i := w; i < b.N; i += writers {
						t0 := time.Now()
						var err error
						if i/writers%2 == 0 {
							err = s.AppendTurn(ctx, user, &store.Turn{ID: fmt.Sprint("t", i), SessionID: "s", Time: t0,
								Messages: []store.TurnMessage{{ID: fmt.Sprint("m", i), Role: "user", Content: "a short message"}}})
						} else {
							if state.ETag == "" {
								state.ETag = store.CreateOnly
							}
							state.SinceProfile = i
							err = s.PutUserState(ctx, user, state)
						}
						lat[i] = time.Since(t0)
						if err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(begin)
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "writes/s")
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkPutSessionRecord measures one conditional PutSession of a
// small document whose summary is a JSON record (as the memory service
// keeps its update records), from one goroutine.
func BenchmarkPutSessionRecord(b *testing.B) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "w.db"), sqlite.Config{Dimensions: dims})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	doc := &store.Session{ID: "upd_0123456789", StartTime: time.Now(), Status: store.SessionActive, ETag: store.CreateOnly,
		Summary: `{"id":"upd_0123456789","store":"bench","scope":"scope-1","status":"queued","created_at":"2026-11-26T13:00:00Z","due_at":"2026-11-26T13:05:00Z","session_id":"mss_abcdef","turns":1}`}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		doc.StartTime = doc.StartTime.Add(time.Second)
		if err := s.PutSession(ctx, "registry", doc); err != nil {
			b.Fatal(err)
		}
	}
}

// benchRecordBody is a memory service's update record, as a record's body
// and as the summary of the session document that kept it before.
const benchRecordBody = `{"id":"upd_0123456789","store":"bench","scope":"scope-1","status":"queued","created_at":"2026-11-26T13:00:00Z","due_at":"2026-11-26T13:05:00Z","session_id":"mss_abcdef","turns":1}`

// BenchmarkPutRecord measures a conditional PutRecord of an update record
// against the PutSession that kept the same record as a session document
// (kind=session), from 1 and 32 goroutines, each rewriting its own record
// of one partition with the ETag of its last write. ns/op is wall time
// per write: at 32 writers, the group commit's throughput.
func BenchmarkPutRecord(b *testing.B) {
	for _, writers := range []int{1, 32} {
		for _, kind := range []string{"session", "record"} {
			b.Run(fmt.Sprintf("kind=%s/writers=%d", kind, writers), func(b *testing.B) {
				ctx := context.Background()
				s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "w.db"), sqlite.Config{Dimensions: dims})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				put := func(w int) func(i int) error {
					id := fmt.Sprintf("upd_%010d", w)
					start := time.Date(2026, 11, 26, 13, 0, 0, 0, time.UTC)
					if kind == "record" {
						r := &store.Record{ID: id, Time: start, Active: true, Body: []byte(benchRecordBody), ETag: store.CreateOnly}
						return func(i int) error {
							r.Time = start.Add(time.Duration(i) * time.Second)
							return s.PutRecord(ctx, "registry", r)
						}
					}
					doc := &store.Session{ID: id, StartTime: start, Status: store.SessionActive, ETag: store.CreateOnly, Summary: benchRecordBody}
					return func(i int) error {
						doc.StartTime = start.Add(time.Duration(i) * time.Second)
						return s.PutSession(ctx, "registry", doc)
					}
				}
				var wg sync.WaitGroup
				b.ReportAllocs()
				b.ResetTimer()
				for w := range writers {
					wg.Go(func() {
						write := put(w)
						for i := w; i < b.N; i += writers {
							if err := write(i); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
			})
		}
	}
}
