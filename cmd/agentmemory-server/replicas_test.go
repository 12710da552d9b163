package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/memoryservice"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// buildServer builds this command once into a temporary directory.
func buildServer(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the server with")
	}
	bin := filepath.Join(t.TempDir(), "agentmemory-server")
	cmd := exec.Command(goBin, "build", "-o", bin, ".")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// serverProc is one server process of a test.
type serverProc struct {
	id   string
	base string
	cmd  *exec.Cmd
}

// startReplicaProc starts bin as replica id on the SQLite file db, offline,
// polling every poll with claims of lease, and waits until it answers.
func startReplicaProc(t *testing.T, bin, db, id string, poll, lease time.Duration) *serverProc {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(bin, "-addr", addr, "-db", db, "-offline", "-replica-id", id, "-rate-limit", "-1",
		"-poll-interval", poll.String(), "-lease-ttl", lease.String())
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")} // no model or store settings
	logs, err := os.Create(filepath.Join(logDir(t), fmt.Sprintf("%s-%d.log", id, time.Now().UnixNano())))
	require.NoError(t, err)
	cmd.Stderr, cmd.Stdout = logs, logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	p := &serverProc{id: id, base: "http://" + addr, cmd: cmd}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(p.base + "/memory_stores")
		if err == nil {
			resp.Body.Close()
			return p
		}
		require.True(t, time.Now().Before(deadline), "replica %s did not start: %v", id, err)
		time.Sleep(20 * time.Millisecond)
	}
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

// readClaims reads update id's record from the SQLite file: its
// partition is the scope's, named by the hash the id carries.
func readClaims(t *testing.T, st store.Store, id string) updateClaims {
	t.Helper()
	hash := strings.TrimPrefix(id, "memupd_")[:32]
	doc, err := st.GetSession(context.Background(), memoryservice.RegistryUserID+".updates."+hash, "update."+id)
	require.NoError(t, err)
	var u updateClaims
	require.NoError(t, json.Unmarshal([]byte(doc.State.CumulativeSummary), &u))
	return u
}

// Three server processes on one SQLite file, clients round-robin over
// them, one replica killed with SIGKILL while updates are queued and
// running: every update answered 202 completes or is superseded, no
// memory item is created twice, no scope's updates ever ran on two
// replicas at once, the dead replica's claims are taken over, and a
// search made on one replica continues on another.
func TestReplicaProcessesShareTheWork(t *testing.T) {
	scopes, rounds := 12, 3
	if long, _ := strconv.ParseBool(os.Getenv("AGENTMEMORY_LONG_TESTS")); long {
		scopes, rounds = 60, 6
	}
	bin := buildServer(t)
	db := filepath.Join(t.TempDir(), "memory.db")
	const poll, lease = 100 * time.Millisecond, 2 * time.Second
	var procs []*serverProc
	for i := range 3 {
		procs = append(procs, startReplicaProc(t, bin, db, fmt.Sprintf("replica-%d", i), poll, lease))
	}
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
	// some of them when it is killed.
	for s := range scopes {
		accept(procs[1], fmt.Sprintf("burst-%02d", s), 0, fmt.Sprintf("I drink tea number %d.", s))
	}
	killed := time.Now()
	require.NoError(t, procs[1].cmd.Process.Signal(syscall.SIGKILL))
	_ = procs[1].cmd.Wait()
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
	created := map[string]string{} // memory id -> the update that created it
	deadline := time.Now().Add(60 * time.Second)
	finished := map[string]bool{}
	for len(finished) < len(accepted) {
		if time.Now().After(deadline) {
			st, err := sqlite.Open(context.Background(), db, sqlite.Config{})
			require.NoError(t, err)
			for id := range accepted {
				if !finished[id] {
					hash := strings.TrimPrefix(id, "memupd_")[:32]
					doc, err := st.GetSession(context.Background(), memoryservice.RegistryUserID+".updates."+hash, "update."+id)
					require.NoError(t, err)
					t.Logf("unfinished %s: %s", id, doc.State.CumulativeSummary)
					m, err := st.GetSession(context.Background(), memoryservice.RegistryUserID+".active", "update."+id)
					if err == nil {
						t.Logf("its marker: due %v", m.StartTime)
					} else {
						t.Logf("its marker: %v", err)
					}
				}
			}
			st.Close()
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

	// The claim histories: no two claims of a scope's updates overlap;
	// the dead replica's claims expired and were taken over.
	st, err := sqlite.Open(context.Background(), db, sqlite.Config{})
	require.NoError(t, err)
	defer st.Close()
	byScope := map[string][]claimEntry{}
	var takeovers []time.Duration
	for id, scope := range accepted {
		u := readClaims(t, st, id)
		assert.Nil(t, u.Claim, "update %s still claimed", id)
		byScope[scope] = append(byScope[scope], u.Claims...)
		for i, c := range u.Claims {
			if c.Replica == "replica-1" && c.End == "expired" {
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
	slices := takeovers
	sort.Slice(slices, func(i, j int) bool { return slices[i] < slices[j] })
	t.Logf("%d updates accepted, %d memories created; %d claims of the killed replica taken over %v to %v after the kill (lease %v, poll %v)",
		len(accepted), len(created), len(takeovers), slices[0].Round(time.Millisecond), slices[len(slices)-1].Round(time.Millisecond), lease, poll)
	assert.Less(t, slices[len(slices)-1], lease+5*time.Second, "taken over within the lease and a poll, with slack")
}

// logDir is where the server processes log: $AGENTMEMORY_TEST_LOGS if
// set (kept for reading), else a temporary directory.
func logDir(t *testing.T) string {
	if d := os.Getenv("AGENTMEMORY_TEST_LOGS"); d != "" {
		return d
	}
	return t.TempDir()
}
