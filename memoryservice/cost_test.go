package memoryservice

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/cosmostest"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/cosmos"
)

// requestCounter is the HTTP transport of a Cosmos DB client that counts
// the requests it sends, by kind (read, write, query, delete, other) and
// by the part of the data their partition holds (partOf).
type requestCounter struct {
	next http.RoundTripper
	mu   sync.Mutex
	n    map[[2]string]int // {kind, part} -> requests
}

func newRequestCounter() *requestCounter {
	return &requestCounter{next: http.DefaultTransport, n: map[[2]string]int{}}
}

func (c *requestCounter) Do(r *http.Request) (*http.Response, error) {
	kind := requestKind(r)
	part := "none"
	if pk := r.Header.Get("x-ms-documentdb-partitionkey"); pk != "" {
		part = partOf(strings.Trim(pk, `[]"`))
	}
	c.mu.Lock()
	c.n[[2]string{kind, part}]++
	c.mu.Unlock()
	return c.next.RoundTrip(r)
}

// requestKind is what a request of Cosmos DB's REST API does to a
// document: read one, write one (create, replace, upsert), query, or
// delete one; "other" is the account's and the containers' metadata.
func requestKind(r *http.Request) string {
	p := r.URL.Path
	switch {
	case !strings.Contains(p, "/docs"):
		return "other"
	case r.Method == http.MethodPost && (strings.HasPrefix(r.Header.Get("Content-Type"), "application/query+json") ||
		strings.EqualFold(r.Header.Get("x-ms-documentdb-isquery"), "true")):
		return "query"
	case r.Method == http.MethodGet:
		return "read"
	case r.Method == http.MethodDelete:
		return "delete"
	default:
		return "write"
	}
}

// partOf names what partition user holds: a scope's memory, or a
// part of the service's own records.
func partOf(user string) string {
	switch {
	case !strings.HasPrefix(user, RegistryUserID):
		return "memory"
	case user == RegistryUserID, strings.HasPrefix(user, RegistryUserID+".scopes."), user == forgetsUser:
		return "registry" // store definitions, scope records, forget receipts
	case strings.HasPrefix(user, RegistryUserID+".updates."):
		return "updates" // update records, a scope's queue record
	case user == activeUser:
		return "markers"
	case strings.HasPrefix(user, RegistryUserID+".lease."), user == sweepUser:
		return "leases"
	case strings.HasPrefix(user, RegistryUserID+".searches."):
		return "searches"
	}
	return "registry"
}

// take returns the counts since the last take, and resets them.
func (c *requestCounter) take() requestCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := requestCounts(c.n)
	c.n = map[[2]string]int{}
	return out
}

type requestCounts map[[2]string]int

// of sums the requests of kind (any if "") to part (any if "").
func (rc requestCounts) of(kind, part string) int {
	n := 0
	for k, v := range rc {
		if (kind == "" || k[0] == kind) && (part == "" || k[1] == part) {
			n += v
		}
	}
	return n
}

// String is one line: total, then by kind, then by part and kind.
func (rc requestCounts) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%3d requests:", rc.of("", ""))
	for _, kind := range requestKinds {
		if n := rc.of(kind, ""); n > 0 {
			fmt.Fprintf(&b, " %d %s", n, kind)
		}
	}
	var parts []string
	for k := range rc {
		if !slices.Contains(parts, k[1]) {
			parts = append(parts, k[1])
		}
	}
	slices.SortFunc(parts, cmp.Compare)
	fmt.Fprintf(&b, " | %s", rc.byPart(parts...))
	return b.String()
}

var requestKinds = []string{"read", "write", "query", "delete", "other"}

// byPart says, for each of parts with requests, how many of each kind:
// "markers 1w+1q+1d" is a write, a query and a delete of markers.
func (rc requestCounts) byPart(parts ...string) string {
	var out []string
	for _, part := range parts {
		var kinds []string
		for _, kind := range requestKinds {
			if n := rc.of(kind, part); n > 0 {
				kinds = append(kinds, fmt.Sprintf("%d%c", n, kind[0]))
			}
		}
		if kinds != nil {
			out = append(out, part+" "+strings.Join(kinds, "+"))
		}
	}
	return strings.Join(out, " ")
}

// TestCosmosRequestsPerOperation counts the requests each operation
// sends to Cosmos DB (the Cosmos-protocol test server), at the HTTP
// level, one replica and one client at a time, and what a replica costs
// at idle. It logs them (go test -v -run TestCosmosRequestsPerOperation
// ./memoryservice/: docs/server.md's table) and checks the figures the
// docs give: a poll is one query, an accept's and a search's
// coordination.
func TestCosmosRequestsPerOperation(t *testing.T) {
	cosmostest.Endpoint(t) // skips without the server
	counter := newRequestCounter()
	db := cosmostest.DatabaseFor(t)
	openWith := func(transport *requestCounter) opener {
		return func(t testing.TB, dims int) store.Store {
			opts := &azcosmos.ClientOptions{}
			if transport != nil {
				opts.ClientOptions = azcore.ClientOptions{Transport: transport}
			}
			st, err := cosmos.Open(context.Background(), cosmos.Config{Endpoint: cosmostest.Endpoint(t), Key: cosmostest.Key,
				Database: db, Dimensions: dims, CreateIfNotExists: true, Logger: quiet(), ClientOptions: opts})
			require.NoError(t, err)
			return st
		}
	}
	// Polls and sweeps only when the test says; no renewal within a run.
	cfg := Config{RateLimit: -1, PollInterval: time.Hour, SweepInterval: time.Hour, LeaseTTL: time.Hour}
	s := startOn(t, openWith(counter), cfg)
	otherCounter := newRequestCounter()
	probe := openWith(nil)(t, s.svc.cfg.Embedder.Dimensions()) // the test's reads, not counted
	t.Cleanup(func() { probe.Close() })
	s.createStore("support", nil)
	// A replica's start is over when its two queries of the markers are
	// seen: resuming the updates left unfinished, and the first poll.
	started := func(c *requestCounter) {
		seen := 0
		require.Eventually(t, func() bool { seen += c.take().of("query", "markers"); return seen >= 2 }, 10*time.Second, 20*time.Millisecond)
	}
	started(counter)

	var table []string
	measure := func(op string, f func()) requestCounts {
		counter.take()
		f()
		rc := counter.take()
		table = append(table, fmt.Sprintf("%-34s %s", op, rc))
		return rc
	}
	statusOf := func(id string) string {
		doc, err := store.RecordsOf(probe).GetRecord(context.Background(), updateHome(id), "update."+id)
		require.NoError(t, err)
		var rec updateRecord
		_, err = decodeRecord(doc, &rec)
		require.NoError(t, err)
		return rec.Status
	}
	two := []string{"I drink espresso at breakfast.", "I am allergic to peanuts."}

	first := measure("accept, a new scope", func() { s.update("support", "alice", 3600, two...) })
	debounced := measure("accept, superseding a queued one", func() { s.update("support", "alice", 3600, "And green tea after lunch.") })
	queued := measure("accept, a scope with none queued", func() { s.update("support", "bob", 3600, two...) })
	// The run: an update due in a second, claimed by its accepting
	// replica's timer; counted from after the 202 to its outcome, and the
	// poll its freed worker makes.
	var id string
	measure("accept, due in a second", func() { id = s.update("support", "carol", 1, two...) })
	run := measure("the update run (2 turns)", func() {
		require.Eventually(t, func() bool { return statusOf(id) == statusCompleted }, time.Minute, 20*time.Millisecond)
		require.Eventually(t, func() bool { s.svc.mu.Lock(); defer s.svc.mu.Unlock(); return len(s.svc.held) == 0 }, 10*time.Second, 10*time.Millisecond)
		time.Sleep(200 * time.Millisecond) // the freed worker's poll
	})
	poll := measure("GET the update (its poller)", func() { s.wait("support", id) })
	var searchID string
	search := measure("search", func() {
		code, out, _ := s.do("POST", "/memory_stores/support:search_memories", map[string]any{"scope": "carol", "items": []any{user("What do I drink?")}})
		require.Equal(t, http.StatusOK, code, "%v", out)
		searchID = out["search_id"].(string)
	})
	continued := measure("search, continuing one", func() {
		code, out, _ := s.do("POST", "/memory_stores/support:search_memories", map[string]any{"scope": "carol",
			"previous_search_id": searchID, "items": []any{user("And in the morning?")}})
		require.Equal(t, http.StatusOK, code, "%v", out)
	})
	deleted := measure("delete_scope", func() {
		code, out, _ := s.do("POST", "/memory_stores/support:delete_scope", map[string]any{"scope": "carol"})
		require.Equal(t, http.StatusOK, code, "%v", out)
	})
	idlePoll := measure("a poll, nothing due", func() { require.NoError(t, s.svc.poll(context.Background())) })
	sweep := measure("a sweep (1 store, 2 scopes)", func() { require.NoError(t, s.svc.sweep(context.Background())) })
	sweepAgain := measure("the next sweep, within the hour", func() { require.NoError(t, s.svc.sweep(context.Background())) })
	// Another replica's sweep: the lease is the first's.
	other := startOn(t, openWith(otherCounter), cfg)
	started(otherCounter)
	counter = otherCounter
	sweepOther := measure("a sweep of another replica", func() { require.NoError(t, other.svc.sweep(context.Background())) })
	t.Logf("requests to Cosmos DB per operation, and of them by part:\n%s", strings.Join(table, "\n"))
	perMinute := func(every time.Duration, rc requestCounts) int { return int(time.Minute/every) * rc.of("", "") }
	t.Logf("idle, per replica and minute at the default intervals (poll %v, sweep %v): %d requests, or %d on the replica holding the sweep's lease (%d in the minute of the hourly sweep of finished updates)",
		DefaultPollInterval, DefaultSweepInterval, perMinute(DefaultPollInterval, idlePoll)+perMinute(DefaultSweepInterval, sweepOther),
		perMinute(DefaultPollInterval, idlePoll)+perMinute(DefaultSweepInterval, sweepAgain), perMinute(DefaultPollInterval, idlePoll)+perMinute(DefaultSweepInterval, sweep))

	// What docs/server.md says of the requests to the records the
	// replicas coordinate with: update and queue records, markers,
	// leases, search records. A record's delete is one point delete.
	coordination := []string{"updates", "markers", "leases", "searches"}
	for _, c := range []struct {
		rc   requestCounts
		want string
	}{
		{first, "updates 1r+2w markers 1w"},
		{debounced, "updates 2r+3w markers 1w+1d"},
		{queued, "updates 1r+2w markers 1w"},
		{run, "updates 1r+4w markers 1w+1q+1d leases 2r+2w"},
		{poll, "updates 1r"},
		{search, "searches 1w"},
		{continued, "searches 1r+1w"},
		{deleted, "updates 2r+1w+1q+2d markers 1d leases 2r+2w searches 1q+2d"},
		{idlePoll, "markers 1q"},
		{sweep, "updates 2q leases 1r+1w searches 1q"},
		{sweepAgain, "leases 1r+1w searches 1q"},
		{sweepOther, "leases 1r"},
	} {
		assert.Equal(t, c.want, c.rc.byPart(coordination...), "%v", c.rc)
	}
	assert.Equal(t, 1, idlePoll.of("", ""), "a poll with nothing due is one query and nothing else: %v", idlePoll)
}
