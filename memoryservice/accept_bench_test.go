package memoryservice

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// BenchmarkAccept measures what accepting an update costs: update_memories
// answered 202 on a SQLite file, offline models, update_delay 300 so that
// no update runs during the timing (each accept supersedes its scope's
// queued update instead), 64 scopes, from 1, 8 and 32 clients over real
// HTTP. It reports throughput (req/s), the 50th and 95th percentile
// latencies, and the SQLite writer's figures (reportWriter).
func BenchmarkAccept(b *testing.B) {
	const scopes = 64
	for _, clients := range []int{1, 8, 32} {
		b.Run(fmt.Sprint("clients=", clients), func(b *testing.B) {
			var st *sqlite.Store
			s := startWrapped(b, b.TempDir()+"/accept.db", Config{RateLimit: -1}, func(sq *sqlite.Store) store.Store { st = sq; return sq })
			s.createStore("bench", nil)
			url := s.srv.URL + "/memory_stores/bench:update_memories?api-version=v1"
			body := func(i int) []byte {
				raw, err := json.Marshal(map[string]any{"scope": fmt.Sprint("scope-", i%scopes), "update_delay": 300,
					"items": []any{user(fmt.Sprint("I moved to city number ", i, " and I like it."))}})
				if err != nil {
					b.Fatal(err)
				}
				return raw
			}
			tr := &http.Transport{MaxIdleConnsPerHost: clients}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr}
			for i := range scopes { // every scope's record exists and one update is queued
				acceptOnce(b, client, url, body(i))
			}
			lat := make([]time.Duration, b.N)
			var wg sync.WaitGroup
			before := st.WriteStats()
			b.ResetTimer()
			begin := time.Now()
			for w := range clients {
				wg.Go(func() {
					// Client w sends requests w, w+clients, …: with 64 scopes
					// and at most 32 clients no two clients share a scope at
					// the same time.
					for i := w; i < b.N; i += clients {
						lat[i] = acceptOnce(b, client, url, body(i))
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(begin)
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
			b.ReportMetric(acceptMillis(lat[len(lat)/2]), "p50-ms")
			b.ReportMetric(acceptMillis(lat[len(lat)*95/100]), "p95-ms")
			reportWriter(b, before, st.WriteStats(), elapsed)
			b.ReportMetric(0, "ns/op")
		})
	}
}

// acceptOnce posts one update_memories body and returns its latency; a
// status other than 202 fails the benchmark.
func acceptOnce(b *testing.B, client *http.Client, url string, body []byte) time.Duration {
	begin := time.Now()
	resp, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		b.Error(err)
		return 0
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(begin)
	if resp.StatusCode != http.StatusAccepted {
		b.Errorf("update_memories: status %d: %s", resp.StatusCode, raw)
	}
	return d
}

func acceptMillis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// reportWriter reports what the SQLite writer did between two of its
// figures, over elapsed: writes per commit, the mean commit and the mean
// wait of a write for its batch, and the share of the time the writer
// was at work (1 is saturated).
func reportWriter(b *testing.B, before, after sqlite.WriteStats, elapsed time.Duration) {
	commits, writes := after.Commits-before.Commits, after.Writes-before.Writes
	if commits == 0 || writes == 0 {
		return
	}
	b.ReportMetric(float64(writes)/float64(commits), "writes/commit")
	b.ReportMetric(acceptMillis((after.Commit-before.Commit)/time.Duration(commits)), "commit-ms")
	b.ReportMetric(acceptMillis((after.Wait-before.Wait)/time.Duration(writes)), "wait-ms")
	b.ReportMetric(float64(after.Busy-before.Busy)/float64(elapsed), "writer-busy")
}
