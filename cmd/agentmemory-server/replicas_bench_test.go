package main

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

	"github.com/stretchr/testify/require"
)

// BenchmarkReplicas measures the Memory Store API's throughput and
// latency with 1 and 3 server processes on one store — a SQLite file
// (store=sqlite), and a database of the Cosmos-protocol test server
// (store=cosmos; skipped without it) — offline models, over real HTTP
// keep-alive connections: update_memories answered 202 (op=accept:
// update_delay 300, 64 scopes, each accept superseding its scope's queued
// update, as BenchmarkAccept of memoryservice) and search_memories
// (op=search: 32 scopes holding a few memories each), from 1, 8 and 32
// clients. Each client sends its requests to the replicas in turn, as a
// round-robin load balancer would: client w's k-th request goes to
// replica (w+k) mod n. It reports throughput (req/s) and the 50th and
// 95th percentile latencies; a status other than the one expected fails
// it. On one machine the replicas share its cores: the ratio of the two
// counts is what the figures say, not the scale-out of separate machines.
func BenchmarkReplicas(b *testing.B) {
	stores := []struct {
		name    string
		backend func(testing.TB) backend
	}{{"sqlite", sqliteBackend}, {"cosmos", cosmosBackend}}
	for _, st := range stores {
		b.Run("store="+st.name, func(b *testing.B) {
			for _, n := range []int{1, 3} {
				b.Run(fmt.Sprint("replicas=", n), func(b *testing.B) {
					bases := startBenchReplicas(b, st.backend(b), n)
					for _, op := range []benchOp{acceptOp(b, bases), searchOp(b, bases)} {
						b.Run("op="+op.name, func(b *testing.B) {
							for _, clients := range []int{1, 8, 32} {
								b.Run(fmt.Sprint("clients=", clients), func(b *testing.B) { op.drive(b, bases, clients) })
							}
						})
					}
				})
			}
		})
	}
}

// startBenchReplicas starts n server processes on the new store of be,
// creates the memory store "support" through the first, and returns the
// replicas' base URLs.
func startBenchReplicas(b *testing.B, be backend, n int) []string {
	b.Helper()
	procs := startReplicas(b, be, n, nil)
	code, out := call(b, "POST", procs[0].base+"/memory_stores", "", storeBody)
	require.Equal(b, http.StatusOK, code, "%v", out)
	bases := make([]string, n)
	for i, p := range procs {
		bases[i] = p.base
	}
	return bases
}

// benchOp is an operation of BenchmarkReplicas: request i's path and
// body, and the status that answers it.
type benchOp struct {
	name string
	path string // after the base URL
	want int
	body func(i int) any
}

const (
	acceptScopes = 64
	searchScopes = 32
	// searchQuestions is how many different questions the search asks:
	// request i asks scope i mod 32 about topic i mod 6, the same as
	// request i+96 (96 is the least common multiple of 32 and 6).
	searchQuestions = 96
)

// acceptOp is update_memories answered 202, due in 300 s so that no
// update runs while it is timed. Each of the 64 scopes gets one accept
// first, so that every accept timed supersedes its scope's queued update.
func acceptOp(b *testing.B, bases []string) benchOp {
	b.Helper()
	op := benchOp{name: "accept", path: "/memory_stores/support:update_memories", want: http.StatusAccepted,
		body: func(i int) any {
			return map[string]any{"scope": fmt.Sprint("accept-", i%acceptScopes), "update_delay": 300,
				"items": []any{map[string]any{"role": "user", "content": fmt.Sprint("I moved to city number ", i, " and I like it.")}}}
		}}
	for i := range acceptScopes {
		code, out := call(b, "POST", bases[i%len(bases)]+op.path, "", op.body(i))
		require.Equal(b, http.StatusAccepted, code, "%v", out)
	}
	return op
}

// searchTopics are what the search scopes' memories are about.
var searchTopics = []string{"dark roast coffee", "a peanut allergy", "saving for a house", "jazz concerts", "window seats", "a vegetarian diet"}

// searchOp is search_memories over 32 scopes, each given a few memories
// first, as BenchmarkSearchMemories of memoryservice does: an update per
// topic, due at once, waited for. Before the timing every replica asks
// each of the questions the timing asks once, so that each replica's
// cache of the scopes' memories is loaded whatever the number of
// replicas; each answer must name a memory.
func searchOp(b *testing.B, bases []string) benchOp {
	b.Helper()
	var ids []string
	for s := range searchScopes {
		for _, topic := range searchTopics {
			code, out := call(b, "POST", bases[len(ids)%len(bases)]+"/memory_stores/support:update_memories", "", map[string]any{
				"scope": fmt.Sprint("search-", s), "update_delay": 0,
				"items": []any{map[string]any{"role": "user", "content": "I care about " + topic + " a lot."}}})
			require.Equal(b, http.StatusAccepted, code, "%v", out)
			ids = append(ids, out["update_id"].(string))
		}
	}
	for i, id := range ids {
		// An update may be superseded by its scope's next one, which
		// then runs its turns too.
		done := waitUpdate(b, bases[i%len(bases)], "support", id)
		require.Contains(b, []any{"completed", "superseded"}, done["status"], "%v", done)
	}
	op := benchOp{name: "search", path: "/memory_stores/support:search_memories", want: http.StatusOK,
		body: func(i int) any {
			return map[string]any{"scope": fmt.Sprint("search-", i%searchScopes), "options": map[string]any{"max_memories": 5},
				"items": []any{map[string]any{"role": "user", "content": "What do I think about " + searchTopics[i%len(searchTopics)] + "?"}}}
		}}
	for _, base := range bases {
		for i := range searchQuestions {
			code, out := call(b, "POST", base+op.path, "", op.body(i))
			require.Equal(b, http.StatusOK, code, "%v", out)
			require.NotEmpty(b, out["memories"], "search %d on %s finds its scope's memory: %v", i, base, out)
		}
	}
	return op
}

// drive sends b.N requests of op from clients goroutines, client w
// sending requests w, w+clients, … (with at most 32 clients no two of them
// share a scope at a time), its k-th to replica (w+k) mod n, and reports
// req/s, p50-ms and p95-ms.
func (op benchOp) drive(b *testing.B, bases []string, clients int) {
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	lat := make([]time.Duration, b.N)
	var wg sync.WaitGroup
	b.ResetTimer()
	begin := time.Now()
	for w := range clients {
		wg.Go(func() {
			for k, i := 0, w; i < b.N && !b.Failed(); k, i = k+1, i+clients {
				lat[i] = op.send(b, client, bases[(w+k)%len(bases)], i)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(begin)
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(millis(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(millis(lat[len(lat)*95/100]), "p95-ms")
	b.ReportMetric(0, "ns/op")
}

// send posts request i of op to the replica at base and returns its
// latency; a transport error or an unexpected status fails b.
func (op benchOp) send(b *testing.B, client *http.Client, base string, i int) time.Duration {
	raw, err := json.Marshal(op.body(i))
	if err != nil {
		b.Error(err)
		return 0
	}
	begin := time.Now()
	resp, err := client.Post(base+op.path, "application/json", bytes.NewReader(raw))
	if err != nil {
		b.Errorf("%s: %v", op.name, err)
		return 0
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(begin)
	if resp.StatusCode != op.want {
		b.Errorf("%s on %s: status %d, want %d: %s", op.name, base, resp.StatusCode, op.want, out)
	}
	return d
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
