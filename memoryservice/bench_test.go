package memoryservice

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// post sends one JSON request and checks its status, returning its time.
func benchPost(b *testing.B, client *http.Client, url string, body any, want int) time.Duration {
	raw, _ := json.Marshal(body)
	start := time.Now()
	resp, err := client.Post(url, "application/json", bytes.NewReader(raw))
	if err != nil {
		b.Error(err)
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		b.Errorf("%s: status %d", url, resp.StatusCode)
	}
	return time.Since(start)
}

// drive sends b.N requests from clients goroutines and reports
// requests per second and the 50th and 95th percentile latencies.
func drive(b *testing.B, clients int, send func(client *http.Client, worker, i int) time.Duration) {
	var mu sync.Mutex
	lat := make([]time.Duration, 0, b.N)
	var wg sync.WaitGroup
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	b.ResetTimer()
	start := time.Now()
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < b.N; i += clients {
				d := send(client, w, i)
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "req/s")
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
	}
	b.ReportMetric(0, "ns/op")
}

// BenchmarkSearchMemories: search_memories over 32 scopes of 6 memories
// each, on SQLite with the offline models.
func BenchmarkSearchMemories(b *testing.B) {
	s := start(b, b.TempDir()+"/bench.db", Config{RateLimit: -1})
	s.createStore("bench", nil)
	topics := []string{"dark roast coffee", "peanut allergy", "saving for a house", "jazz concerts", "window seats", "a vegetarian diet"}
	for sc := range 32 {
		var ids []string
		for _, topic := range topics {
			ids = append(ids, s.update("bench", fmt.Sprint("scope-", sc), 0, "I care about "+topic+" a lot."))
		}
		for _, id := range ids {
			s.wait("bench", id)
		}
	}
	url := s.srv.URL + "/memory_stores/bench:search_memories?api-version=v1"
	for _, clients := range []int{1, 8, 32} {
		b.Run(fmt.Sprint("clients=", clients), func(b *testing.B) {
			drive(b, clients, func(c *http.Client, w, i int) time.Duration {
				return benchPost(b, c, url, map[string]any{"scope": fmt.Sprint("scope-", i%32),
					"items": []any{user("What do I think about " + topics[i%len(topics)] + "?")}, "options": map[string]any{"max_memories": 5}}, http.StatusOK)
			})
		})
	}
}

// BenchmarkUpdateMemories: update_memories answered 202 (the items durable
// as turns), one scope per client so no update supersedes another; the
// runs (end of session, reflection) continue in the background and are
// waited for outside the timing.
func BenchmarkUpdateMemories(b *testing.B) {
	s := start(b, b.TempDir()+"/bench.db", Config{RateLimit: -1})
	s.createStore("bench", nil)
	url := s.srv.URL + "/memory_stores/bench:update_memories?api-version=v1"
	for _, clients := range []int{8, 32} {
		b.Run(fmt.Sprint("clients=", clients), func(b *testing.B) {
			drive(b, clients, func(c *http.Client, w, i int) time.Duration {
				return benchPost(b, c, url, map[string]any{"scope": fmt.Sprint("c", clients, "-", w),
					"items": []any{user(fmt.Sprint("I moved to city number ", i, " and I like it."))}, "update_delay": 0}, http.StatusAccepted)
			})
			flushStart := time.Now()
			for {
				qs, err := s.svc.QueueStats(context.Background())
				require.NoError(b, err)
				if qs.Depth == 0 {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			s.svc.wg.Wait()
			b.ReportMetric(time.Since(flushStart).Seconds(), "drain-s")
		})
	}
}
