package memoryservice

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/cosmostest"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/llm/openai"
	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// Short leases and polls, so that takeovers happen within a test.
const (
	testPoll  = 20 * time.Millisecond
	testLease = 600 * time.Millisecond
)

// sqliteOpener opens the SQLite file at path anew at every call, as a
// separate process would.
func sqliteOpener(path string) opener {
	return func(t testing.TB, dims int) store.Store {
		st, err := sqlite.Open(context.Background(), path, sqlite.Config{Dimensions: dims, Logger: quiet()})
		require.NoError(t, err)
		return st
	}
}

// gate holds the session-summary calls of a replica's model until
// opened: a replica whose run is under way, for as long as a test needs.
type gate struct {
	once    sync.Once
	entered chan struct{} // closed at the first call held
	open    chan struct{}
}

func newGate(t *testing.T) *gate {
	g := &gate{entered: make(chan struct{}), open: make(chan struct{})}
	return g
}

func (g *gate) model(r fakeopenai.Request) fakeopenai.Reply {
	if strings.HasPrefix(r.SystemText(), prompts.MarkerPrefix+"session_summary") {
		g.once.Do(func() { close(g.entered) })
		<-g.open
	}
	return memoryModel(r)
}

// replica serves the store open opens, as replica id, with the scripted
// memory model (held by g, if not nil) and embeddings on a fake server
// of its own.
func replica(t *testing.T, open opener, id string, g *gate, cfg Config) *server {
	t.Helper()
	srv := fakeopenai.New(t)
	if g != nil {
		srv.HandleChat(g.model)
		t.Cleanup(func() { close(g.open) }) // before the fake server closes
	} else {
		srv.HandleChat(memoryModel)
	}
	srv.HandleEmbeddings(fakeEmbeddings)
	oc := openai.Config{BaseURL: srv.URL(), ChatModel: "chat", EmbeddingModel: "emb", EmbeddingModelDimensions: fakeDims, MaxRetries: -1}
	chat, err := openai.NewChat(oc)
	require.NoError(t, err)
	emb, err := openai.NewEmbedder(oc)
	require.NoError(t, err)
	cfg.Chat, cfg.Mini, cfg.Embedder = chat, chat, emb
	cfg.ReplicaID, cfg.RateLimit = id, -1
	if os.Getenv("REPLICA_LOGS") != "" { // to see a failing replica test's claims as they happen
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("replica", id)
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = testPoll
	}
	if cfg.LeaseTTL == 0 {
		cfg.LeaseTTL = testLease
	}
	return startOn(t, open, cfg)
}

// record reads update id's record as the store holds it.
func (s *server) record(id string) updateRecord {
	s.t.Helper()
	var rec updateRecord
	_, err := s.svc.getRecord(context.Background(), updateKey(id), &rec)
	require.NoError(s.t, err)
	return rec
}

// waitClaimed waits until update id is claimed by replica holder.
func (s *server) waitClaimed(id, holder string) {
	s.t.Helper()
	require.Eventually(s.t, func() bool {
		rec := s.record(id)
		return rec.Claim != nil && rec.Claim.Holder == holder
	}, 10*time.Second, 10*time.Millisecond, "update %s claimed by %s", id, holder)
}

// noOverlap checks that the claims of updates recs (all of one scope)
// never overlap, and that every claim but the open ones has ended.
func noOverlap(t *testing.T, recs ...updateRecord) {
	t.Helper()
	var all []claimEntry
	for _, r := range recs {
		all = append(all, r.Claims...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ClaimedAt.Before(all[j].ClaimedAt) })
	for i := 1; i < len(all); i++ {
		prev := all[i-1]
		require.NotEmpty(t, prev.End, "claim %+v ended before the next began", prev)
		assert.False(t, all[i].ClaimedAt.Before(prev.EndedAt), "claim %+v overlaps %+v", all[i], prev)
	}
}

// backends runs f on one SQLite file and on the Cosmos-protocol test
// server (skipped without it), each replica opening its own store.
func backends(t *testing.T, f func(t *testing.T, open opener)) {
	t.Run("sqlite", func(t *testing.T) { f(t, sqliteOpener(dbPath(t))) })
	t.Run("cosmos", func(t *testing.T) {
		cosmostest.Endpoint(t)
		f(t, cosmosOpener(t))
	})
}

// An update accepted by one replica, which then stops, is run by
// another; an accept on one replica supersedes the queued update of the
// scope another accepted (the debounce), whose turns the one run ends
// in one session.
func TestReplicasShareTheQueue(t *testing.T) {
	backends(t, func(t *testing.T, open opener) {
		a := replica(t, open, "replica-a", nil, Config{})
		b := replica(t, open, "replica-b", nil, Config{})
		a.createStore("support", nil)

		first := a.update("support", "alice", 3600, "I drink espresso at breakfast.")
		second := b.update("support", "alice", 0, "I drink espresso after lunch too.")
		done := b.wait("support", second)
		operations(t, done)
		_, old, _ := a.do("GET", "/memory_stores/support/updates/"+first, nil)
		assert.Equal(t, "superseded", old["status"], "superseded across replicas")
		assert.Equal(t, second, old["superseded_by"])
		ss, err := a.st.ListSessions(context.Background(), UserID("support", "alice"), store.SessionFilter{})
		require.NoError(t, err)
		require.Len(t, ss, 1, "both updates' turns in one session")
		turns, err := a.st.ListTurns(context.Background(), UserID("support", "alice"), ss[0].ID, 1)
		require.NoError(t, err)
		assert.Len(t, turns, 2)

		queued := a.update("support", "bob", 1, "I drink espresso every morning.")
		a.stop() // its update stays queued in the store
		done = b.wait("support", queued)
		operations(t, done)
		rec := b.record(queued)
		require.Len(t, rec.Claims, 1)
		assert.Equal(t, "replica-b", rec.Claims[0].Replica, "run by the replica left")
		assert.Equal(t, claimFinished, rec.Claims[0].End)
		assert.Nil(t, rec.Claim)
	})
}

// A replica that dies running an update leaves its claim to expire;
// another replica takes the update over within the lease and a poll,
// runs it once more and completes it: the claims do not overlap, and
// the scope's memories are made once.
func TestADeadReplicasUpdateIsTakenOver(t *testing.T) {
	backends(t, func(t *testing.T, open opener) {
		g := newGate(t)
		a := replica(t, open, "replica-a", g, Config{})
		a.createStore("support", nil)
		id := a.update("support", "carol", 0, "I drink espresso with oat milk.")
		<-g.entered // a's run is ending the session
		a.waitClaimed(id, "replica-a")
		b := replica(t, open, "replica-b", nil, Config{}) // started once a runs it, not to claim it first
		died := time.Now()
		a.svc.die()

		done := b.wait("support", id)
		took := time.Since(died)
		t.Logf("taken over %v after the death (lease %v, poll %v)", took, testLease, testPoll)
		assert.Less(t, took, testLease+5*time.Second)
		ops := operations(t, done)
		rec := b.record(id)
		require.Len(t, rec.Claims, 2, "%+v", rec.Claims)
		assert.Equal(t, "replica-a", rec.Claims[0].Replica)
		assert.Equal(t, claimExpired, rec.Claims[0].End)
		assert.Equal(t, "replica-b", rec.Claims[1].Replica)
		assert.Equal(t, claimFinished, rec.Claims[1].End)
		noOverlap(t, rec)
		qs, err := b.svc.QueueStats(context.Background())
		require.NoError(t, err)
		assert.EqualValues(t, 1, qs.Takeovers)
		assert.GreaterOrEqual(t, qs.Claims, int64(1))
		// The dead replica's run may still rewrite the update's marker
		// after b finished it: the next poll drops a marker of a finished
		// update.
		assert.Eventually(t, func() bool {
			qs, err := b.svc.QueueStats(context.Background())
			return err == nil && qs.Depth == 0
		}, 5*time.Second, 10*time.Millisecond, "nothing left queued")

		summaries := b.list("support", "carol", "?kind=chat_summary")
		assert.Len(t, summaries, 1, "the session summarised once")
		assert.Len(t, ops, len(b.list("support", "carol", "")), "the operations list every item once")
	})
}

// Close hands a claim back: another replica takes the update over at
// once, long before the claim would have expired.
func TestCloseHandsClaimsBack(t *testing.T) {
	backends(t, func(t *testing.T, open opener) {
		g := newGate(t)
		long := Config{LeaseTTL: time.Minute}
		a := replica(t, open, "replica-a", g, long)
		a.createStore("support", nil)
		id := a.update("support", "dave", 0, "I drink espresso in the evening.")
		<-g.entered
		a.waitClaimed(id, "replica-a")
		b := replica(t, open, "replica-b", nil, long)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		closed := time.Now()
		_ = a.svc.Close(ctx) // the run is cut short
		operations(t, b.wait("support", id))
		assert.Less(t, time.Since(closed), 20*time.Second, "not after the minute's lease")
		rec := b.record(id)
		require.Len(t, rec.Claims, 2, "%+v", rec.Claims)
		assert.Equal(t, claimReleased, rec.Claims[0].End)
		assert.Equal(t, claimFinished, rec.Claims[1].End)
		noOverlap(t, rec)
	})
}

// A replica whose claim was taken over (it did not renew in time) finds
// it lost at its next renewal, stops its run and writes no outcome.
func TestALostClaimStopsTheRun(t *testing.T) {
	g := newGate(t)
	a := replica(t, sqliteOpener(dbPath(t)), "replica-a", g, Config{})
	a.createStore("support", nil)
	id := a.update("support", "erin", 0, "I drink espresso at noon.")
	<-g.entered
	a.waitClaimed(id, "replica-a")
	// As a replica that took it over writes it.
	rec := a.record(id)
	closeClaim(&rec, claimExpired, rec.Claim.Until)
	now := time.Now()
	rec.Claim = &updateClaim{Holder: "replica-z", Since: now, Until: now.Add(time.Hour)}
	rec.Claims = append(rec.Claims, claimEntry{Replica: "replica-z", ClaimedAt: now})
	require.NoError(t, a.svc.putRecord(context.Background(), updateKey(id), "", rec.CreatedAt, true, &rec))
	require.Eventually(t, func() bool {
		qs, err := a.svc.QueueStats(context.Background())
		return err == nil && qs.ExpiredLeases == 1
	}, 5*time.Second, 10*time.Millisecond, "the loss counted")
	time.Sleep(3 * testPoll)
	after := a.record(id)
	assert.Equal(t, statusInProgress, after.Status, "no outcome written by the loser")
	assert.Equal(t, "replica-z", after.Claim.Holder)
}

// A search made on one replica is continued on another.
func TestASearchContinuesOnAnotherReplica(t *testing.T) {
	backends(t, func(t *testing.T, open opener) {
		a := replica(t, open, "replica-a", nil, Config{})
		b := replica(t, open, "replica-b", nil, Config{})
		a.createStore("travel", nil)
		id, _ := a.searchID("travel", "alice", "", "I am going to Lisbon soon.")
		code, out := b.searchWith("travel", "alice", id, "And then?")
		assert.Equal(t, http.StatusOK, code, "%v", out)
		code, out = b.searchWith("travel", "bob", id, "And then?")
		assert.Equal(t, http.StatusBadRequest, code, "not another scope's: %v", out)
	})
}

// An update run twice — its first holder died after writing the scope's
// memories and before writing its outcome — makes the memories once,
// and its second run lists the same operations as the first.
func TestAnUpdateRunTwiceMakesItsMemoriesOnce(t *testing.T) {
	open := sqliteOpener(dbPath(t))
	a := replica(t, open, "replica-a", nil, Config{})
	b := replica(t, open, "replica-b", nil, Config{})
	a.createStore("support", nil)
	id := a.update("support", "frank", 0, "I drink espresso before every meeting.", "I take it without sugar.")
	first := operations(t, a.wait("support", id))
	items := a.list("support", "frank", "")
	require.NotEmpty(t, items)

	// As the first holder leaves it when it dies before the outcome.
	rec := a.record(id)
	died := time.Now().Add(-time.Second)
	rec.Status, rec.Result = statusInProgress, nil
	rec.Claims[len(rec.Claims)-1].End, rec.Claims[len(rec.Claims)-1].EndedAt = "", time.Time{}
	rec.Claim = &updateClaim{Holder: "replica-dead", Since: died, Until: died}
	a.svc.dropTimer(id)
	require.NoError(t, a.svc.putRecord(context.Background(), updateKey(id), "", rec.CreatedAt, true, &rec))
	a.stop()
	b.svc.mark(context.Background(), id, died)

	second := operations(t, b.wait("support", id))
	assert.ElementsMatch(t, opIDs(first), opIDs(second), "the same operations")
	again := b.list("support", "frank", "")
	assert.ElementsMatch(t, contentsOf(items), contentsOf(again), "no memory made twice")
}

func opIDs(ops []map[string]any) []string {
	var ids []string
	for _, op := range ops {
		ids = append(ids, op["kind"].(string)+" "+op["memory_item"].(map[string]any)["memory_id"].(string))
	}
	return ids
}

func contentsOf(items []map[string]any) []string {
	var out []string
	for _, it := range items {
		out = append(out, it["content"].(string))
	}
	slices.Sort(out)
	return out
}

// QueueStats counts the updates not finished and dates the oldest due.
func TestQueueStatsCountsTheQueue(t *testing.T) {
	clk := &clock{}
	s := start(t, dbPath(t), Config{Now: clk.Now, RateLimit: -1})
	s.createStore("support", nil)
	qs, err := s.svc.QueueStats(context.Background())
	require.NoError(t, err)
	assert.Zero(t, qs.Depth)
	assert.True(t, qs.OldestDue.IsZero())
	s.update("support", "gina", 60, "I drink espresso.")
	s.update("support", "hal", 120, "I drink espresso too.")
	qs, err = s.svc.QueueStats(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 2, qs.Depth)
	assert.True(t, qs.OldestDue.IsZero(), "none due yet")
	s.svc.Close(context.Background()) // nothing claims them now
	clk.Add(90 * time.Second)
	qs, err = s.svc.QueueStats(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 2, qs.Depth)
	assert.WithinDuration(t, clk.Now().Add(-30*time.Second), qs.OldestDue, 2*time.Second, "gina's, due 30 s ago")
}

// A held claim's outcome, once written, ends it: a renewal that comes
// after is refused, not applied to a record that no longer has a claim.
func TestAnEndedClaimRefusesMoreWrites(t *testing.T) {
	clk := &clock{}
	s := start(t, dbPath(t), Config{Now: clk.Now})
	s.createStore("support", nil)
	id := s.update("support", "ivy", 60, "I drink espresso.")
	require.NoError(t, s.svc.Close(context.Background())) // no poller to claim it first
	clk.Add(2 * time.Minute)
	h, err := s.svc.claim(context.Background(), id, time.Time{})
	require.NoError(t, err)
	require.NotNil(t, h)
	s.svc.store(context.Background(), h, func(r *updateRecord) { r.Status = statusCompleted })
	err = s.svc.write(context.Background(), h, true, func(r *updateRecord) { r.Claim.Until = clk.Now() })
	assert.ErrorIs(t, err, errClaimEnded)
	assert.Equal(t, statusCompleted, s.record(id).Status)
}
