package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/cosmostest"
	"github.com/agentmemory/agentmemory/internal/longtest"
	"github.com/agentmemory/agentmemory/internal/stack"
	"github.com/agentmemory/agentmemory/memoryservice"
	"github.com/agentmemory/agentmemory/store"
)

// backend is the store a test's server processes share: a SQLite file,
// or a database of the Cosmos-protocol test server.
type backend struct {
	name string
	db   string            // the SQLite file (-db; unused on Cosmos)
	env  map[string]string // the store's environment (Cosmos), nil for SQLite
}

// sqliteBackend is a new SQLite file.
func sqliteBackend(t testing.TB) backend {
	return backend{name: "SQLite file", db: filepath.Join(t.TempDir(), "memory.db")}
}

// cosmosBackend is a new database of the Cosmos-protocol test server,
// deleted when t ends; it skips t without the server (fails in CI).
func cosmosBackend(t testing.TB) backend {
	t.Helper()
	db := cosmostest.DatabaseFor(t)
	return backend{name: "Azure Cosmos DB", db: filepath.Join(t.TempDir(), "unused.db"), env: map[string]string{
		"AZURE_COSMOS_ENDPOINT": cosmostest.Endpoint(t), "AZURE_COSMOS_KEY": cosmostest.Key, "AZURE_COSMOS_DATABASE": db}}
}

// environment is a server process's: the store's, and extra.
func (b backend) environment(extra map[string]string) map[string]string {
	out := map[string]string{}
	maps.Copy(out, b.env)
	maps.Copy(out, extra)
	return out
}

// open opens the backend's store as a server process does (offline),
// for the test to read the service's records; closed when t ends.
func (b backend) open(t *testing.T) store.Store {
	t.Helper()
	m, err := stack.ModelsFromEnv(env(b.env), true)
	require.NoError(t, err)
	st, _, err := stack.OpenStore(context.Background(), env(b.env), b.db, m.Embedder.Dimensions(), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st
}

// startReplicas starts n server processes on b at once, as a deployment
// starts its replicas, offline and without a rate limit, each with args
// and the environment extra, and waits until all of them listen.
func startReplicas(t testing.TB, b backend, n int, extra map[string]string, args ...string) []*serverProc {
	t.Helper()
	procs := make([]*serverProc, n)
	for i := range procs {
		id := fmt.Sprintf("replica-%d", i)
		procs[i] = launchChild(t, id, append([]string{"-db", b.db, "-offline", "-replica-id", id, "-rate-limit", "-1"}, args...), b.environment(extra))
	}
	for _, p := range procs {
		p.started(t)
		require.Contains(t, p.logs(t), `memory="`+b.name, "%s serves on the test's store", p.id)
	}
	return procs
}

// claimEntry is an entry of an update record's claim history, as the
// memory service keeps it in the store.
type claimEntry struct {
	Replica   string    `json:"replica"`
	ClaimedAt time.Time `json:"claimed_at"`
	RunAt     time.Time `json:"run_at"`
	EndedAt   time.Time `json:"ended_at"`
	End       string    `json:"end"`
}

type updateClaims struct {
	Scope  string       `json:"scope"`
	Status string       `json:"status"`
	Claims []claimEntry `json:"claims"`
	Claim  *struct {
		Holder string `json:"holder"`
	} `json:"claim"`
}

// readClaims reads update id's record from the store: its
// partition is the scope's, named by the hash the id carries.
func readClaims(t *testing.T, st store.Store, id string) updateClaims {
	t.Helper()
	hash := strings.TrimPrefix(id, "memupd_")[:32]
	r, err := store.RecordsOf(st).GetRecord(context.Background(), memoryservice.RegistryUserID+".updates."+hash, "update."+id)
	require.NoError(t, err)
	var u updateClaims
	require.NoError(t, json.Unmarshal(r.Body, &u))
	return u
}

// Three server processes on one store — a SQLite file, and a database of
// the Cosmos-protocol test server — clients round-robin over them, one
// replica killed with SIGKILL while updates are queued and running: every
// update answered 202 completes or is superseded, no memory item is
// created twice, no scope's updates ever ran on two replicas at once, the
// dead replica's claims are taken over within the lease and a poll, and a
// search made on one replica continues on another.
func TestReplicaProcessesShareTheWork(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { replicasShareTheWork(t, sqliteBackend(t)) })
	t.Run("cosmos", func(t *testing.T) { replicasShareTheWork(t, cosmosBackend(t)) })
}

func replicasShareTheWork(t *testing.T, b backend) {
	scopes, rounds := longtest.Pick(t, 8, 60), longtest.Pick(t, 3, 6)
	const poll, lease = 100 * time.Millisecond, 5 * time.Second
	procs := startReplicas(t, b, 3, nil, "-poll-interval", poll.String(), "-lease-ttl", lease.String())
	code, out := call(t, "POST", procs[0].base+"/memory_stores", "", storeBody)
	require.Equal(t, http.StatusOK, code, "%v", out)

	accepted := map[string]string{} // update id -> scope
	n := 0
	accept := func(p *serverProc, scope string, delay int, text string) {
		code, out := call(t, "POST", p.base+"/memory_stores/support:update_memories", "", map[string]any{
			"scope": scope, "update_delay": delay, "items": []any{map[string]any{"role": "user", "content": text}}})
		require.Equal(t, http.StatusAccepted, code, "%s: %v", p.id, out)
		accepted[out["update_id"].(string)] = scope
	}
	// Each scope is updated through every replica in turn: the first
	// rounds queue (debounced across replicas), the last is due at once.
	for r := range rounds - 1 {
		for s := range scopes {
			delay := 1
			if r == rounds-2 {
				delay = 0
			}
			accept(procs[n%3], fmt.Sprintf("user-%02d", s), delay, fmt.Sprintf("In round %d I talked about coffee number %d.", r, s))
			n++
		}
	}
	// A burst on the replica about to die, due at once: it is running
	// some of them when it is killed, and has others queued.
	for s := range scopes {
		accept(procs[1], fmt.Sprintf("burst-%02d", s), 0, fmt.Sprintf("I drink tea number %d.", s))
	}
	killed := time.Now()
	procs[1].kill(t)
	alive := []*serverProc{procs[0], procs[2]}
	for s := range scopes { // the last round, on the survivors
		accept(alive[s%2], fmt.Sprintf("user-%02d", s), 0, fmt.Sprintf("In the last round I talked about tea number %d.", s))
	}

	// A search made on one replica continues on another.
	code, out = call(t, "POST", alive[0].base+"/memory_stores/support:search_memories", "", map[string]any{
		"scope": "user-00", "items": []any{map[string]any{"role": "user", "content": "What do I drink?"}}})
	require.Equal(t, http.StatusOK, code, "%v", out)
	code, out = call(t, "POST", alive[1].base+"/memory_stores/support:search_memories", "", map[string]any{
		"scope": "user-00", "previous_search_id": out["search_id"],
		"items": []any{map[string]any{"role": "user", "content": "And in the morning?"}}})
	require.Equal(t, http.StatusOK, code, "a continuation on another replica: %v", out)

	// Every update accepted completes or is superseded, on any poller.
	st := b.open(t)
	created := map[string]string{} // memory id -> the update that created it
	deadline := time.Now().Add(longtest.Pick(t, 60*time.Second, 3*time.Minute))
	finished := map[string]bool{}
	for len(finished) < len(accepted) {
		if time.Now().After(deadline) {
			for id := range accepted {
				if !finished[id] {
					t.Logf("unfinished %s: %+v", id, readClaims(t, st, id))
					m, err := store.RecordsOf(st).GetRecord(context.Background(), memoryservice.RegistryUserID+".active", "update."+id)
					if err == nil {
						t.Logf("its marker: due %v", m.Time)
					} else {
						t.Logf("its marker: %v", err)
					}
				}
			}
			t.Fatalf("%d of %d updates finished", len(finished), len(accepted))
		}
		for id := range accepted {
			if finished[id] {
				continue
			}
			code, out := call(t, "GET", alive[len(finished)%2].base+"/memory_stores/support/updates/"+id, "", nil)
			require.Equal(t, http.StatusOK, code, "%v", out)
			switch out["status"] {
			case "completed":
				for _, op := range out["result"].(map[string]any)["memory_operations"].([]any) {
					op := op.(map[string]any)
					if op["kind"] != "create" {
						continue
					}
					mid := op["memory_item"].(map[string]any)["memory_id"].(string)
					assert.Empty(t, created[mid], "memory %s created by %s and by %s", mid, created[mid], id)
					created[mid] = id
				}
				finished[id] = true
			case "superseded":
				finished[id] = true
			case "queued", "in_progress":
			default:
				t.Fatalf("update %s: %v", id, out)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	assert.NotEmpty(t, created)
	// A burst scope had one update, run by the killed replica or after
	// it: its memories are each there once, whoever ran it and however
	// often.
	for s := range scopes {
		scope := fmt.Sprintf("burst-%02d", s)
		code, out := call(t, "POST", alive[s%2].base+"/memory_stores/support/items:list?limit=100", "", map[string]any{"scope": scope})
		require.Equal(t, http.StatusOK, code, "%v", out)
		seen := map[string]bool{}
		for _, it := range out["data"].([]any) {
			it := it.(map[string]any)
			key := fmt.Sprint(it["kind"], ": ", it["content"])
			assert.False(t, seen[key], "scope %s has %q twice", scope, key)
			seen[key] = true
		}
		assert.NotEmpty(t, seen, "scope %s has its memories", scope)
	}

	// The claim histories: no two runs of a scope's updates overlap; the
	// dead replica's claims expired and were taken over.
	byScope := map[string][]claimEntry{}
	var takeovers []time.Duration
	for id, scope := range accepted {
		u := readClaims(t, st, id)
		assert.Nil(t, u.Claim, "update %s still claimed", id)
		byScope[scope] = append(byScope[scope], u.Claims...)
		for i, c := range u.Claims {
			if c.Replica == procs[1].id && c.End == "expired" {
				require.Greater(t, len(u.Claims), i+1, "update %s: expired and not taken over", id)
				takeovers = append(takeovers, u.Claims[i+1].ClaimedAt.Sub(killed))
			}
		}
	}
	// A claim may wait for the scope's lease while another replica runs
	// an update of the scope: the runs, from taking the lease to the
	// claim's end, must not overlap. (A killed replica's run has no end
	// but its claim's expiry; the lease it held expires with it.)
	ran := 0
	for scope, claims := range byScope {
		var runs []claimEntry
		for _, c := range claims {
			if !c.RunAt.IsZero() && c.End == "finished" {
				runs = append(runs, c)
			}
		}
		ran += len(runs)
		sort.Slice(runs, func(i, j int) bool { return runs[i].RunAt.Before(runs[j].RunAt) })
		for i := 1; i < len(runs); i++ {
			assert.False(t, runs[i].RunAt.Before(runs[i-1].EndedAt), "scope %s: run %+v overlaps %+v", scope, runs[i], runs[i-1])
		}
	}
	require.NotZero(t, ran, "the claims record when their runs began")
	require.NotEmpty(t, takeovers, "the killed replica held claims, taken over")
	slices.Sort(takeovers)
	t.Logf("%s: %d updates accepted, %d memories created; %d claims of the killed replica taken over %v to %v after the kill (lease %v, poll %v)",
		b.name, len(accepted), len(created), len(takeovers), takeovers[0].Round(time.Millisecond), takeovers[len(takeovers)-1].Round(time.Millisecond), lease, poll)
	assert.Less(t, takeovers[len(takeovers)-1], lease+5*time.Second, "taken over within the lease and a poll, with slack")
}
