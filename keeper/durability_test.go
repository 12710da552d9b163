package keeper_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/keeper"
	"github.com/agentmemory/agentmemory/store"
)

// faultyStore is the real store with one injected fault: the first session
// write that fail matches fails, as a crash at that point would leave it.
type faultyStore struct {
	store.Store
	fail  func(*store.Session) bool
	fired bool
}

var errInjected = errors.New("injected fault")

func (f *faultyStore) PutSession(ctx context.Context, userID string, doc *store.Session) error {
	if !f.fired && f.fail(doc) {
		f.fired = true
		return errInjected
	}
	return f.Store.PutSession(ctx, userID, doc)
}

// coverage counts, for each turn number, the interactions of a session
// holding it.
func coverage(t *testing.T, st store.Store, user, session string) map[int]int {
	t.Helper()
	docs, err := st.ListInteractions(context.Background(), user, store.InteractionFilter{SessionID: session})
	require.NoError(t, err)
	out := map[int]int{}
	for _, d := range docs {
		for seq := d.FirstTurn; seq <= d.LastTurn; seq++ {
			out[seq]++
		}
	}
	return out
}

func assertOnce(t *testing.T, cov map[int]int, n int) {
	t.Helper()
	for seq := 1; seq <= n; seq++ {
		assert.Equal(t, 1, cov[seq], "turn %d is in exactly one interaction", seq)
	}
	assert.Len(t, cov, n)
}

// An end of session stopped between storing its short final chunk and
// recording it (a kill, a store error) is resumed, more turns come, and the
// next prune replaces that chunk: no turn is in two interactions.
func TestInterruptedEndResumesWithoutDuplicates(t *testing.T) {
	for name, stopWhen := range map[string]func(*store.Session) bool{
		"before the final chunk is recorded": func(d *store.Session) bool { return d.State.PrunedThrough == 13 },
		"before the session is completed":    func(d *store.Session) bool { return d.Status == store.SessionCompleted },
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, nil)
			faulty := &faultyStore{Store: e.st, fail: stopWhen}
			k, err := keeper.New(faulty, e.k.Config())
			require.NoError(t, err)
			s, err := k.Open(ctx, "u1", "s1")
			require.NoError(t, err)
			addTurns(t, s, 1, 13)
			_, err = s.End(ctx)
			require.ErrorIs(t, err, errInjected)

			// A new process resumes the session.
			require.NoError(t, e.st.Close())
			e.open(t, nil)
			s, err = e.k.Open(ctx, "u1", "s1")
			require.NoError(t, err)
			if name == "before the final chunk is recorded" {
				addTurns(t, s, 14, 20)
			}
			res, err := s.End(ctx)
			require.NoError(t, err)
			assert.Equal(t, store.SessionCompleted, res.Session.Status)
			n := 13
			if name == "before the final chunk is recorded" {
				n = 20
			}
			assertOnce(t, coverage(t, e.st, "u1", "s1"), n)
		})
	}
}

// A session document written by the previous version — turns inside it,
// interaction ids by turn range, and a short chunk its interrupted end left
// behind — keeps working: its turns move to turn records and the next
// prune replaces the overlapping chunk.
func TestPreviousVersionSessionDocumentIsMigrated(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	doc := &store.Session{ID: "s1", UserID: "u1", StartTime: e.clock.now(), Status: store.SessionActive,
		ReflectionStatus: store.ReflectionPending,
		State:            store.SessionState{TurnCounter: 13, PrunedThrough: 10, CumulativeSummary: "The client talked about a 401k rollover."}}
	for n := 6; n <= 13; n++ {
		tr := turn(n)
		tr.Seq, tr.Time = n, e.clock.now()
		doc.State.Turns = append(doc.State.Turns, tr)
	}
	require.NoError(t, e.st.PutSession(ctx, "u1", doc))
	for _, r := range [][2]int{{1, 10}, {11, 13}} {
		require.NoError(t, e.st.PutInteraction(ctx, "u1", &store.Interaction{
			ID: store.InteractionID("s1", r[0], r[1]), SessionID: "s1", FirstTurn: r[0], LastTurn: r[1],
			Timestamp: e.clock.now(), Content: "user: earlier turns"}))
	}

	s, err := e.k.Open(ctx, "u1", "s1")
	require.NoError(t, err)
	assert.Equal(t, []int{6, 7, 8, 9, 10, 11, 12, 13}, seqs(s.State().Turns), "the turns are resumed with their numbers")
	stored, err := e.st.ListTurns(ctx, "u1", "s1", 0)
	require.NoError(t, err)
	assert.Len(t, stored, 8, "and moved to turn records")
	raw, err := e.st.GetSession(ctx, "u1", "s1")
	require.NoError(t, err)
	assert.Empty(t, raw.State.Turns, "the session document no longer carries them")

	addTurns(t, s, 14, 20)
	res, err := s.Prune(ctx)
	require.NoError(t, err)
	require.Len(t, res, 1)
	assert.Equal(t, [2]int{11, 20}, [2]int{res[0].Interaction.FirstTurn, res[0].Interaction.LastTurn})
	assertOnce(t, coverage(t, e.st, "u1", "s1"), 20)
	assert.Equal(t, 20, s.State().SummaryThrough)
}

// interleavedStore is the real store with another process acting at a
// chosen moment: elsewhere runs once, just before this process next stores
// an interaction (between a prune's read of the turns and its record of
// the prune); failRead fails this process's next read of turns, as a
// passed deadline would.
type interleavedStore struct {
	store.Store
	elsewhere func()
	failRead  bool
}

func (s *interleavedStore) PutInteraction(ctx context.Context, userID string, doc *store.Interaction) error {
	if f := s.elsewhere; f != nil {
		s.elsewhere = nil
		f()
	}
	return s.Store.PutInteraction(ctx, userID, doc)
}

func (s *interleavedStore) ListTurns(ctx context.Context, userID, sessionID string, from int) ([]*store.Turn, error) {
	if s.failRead {
		s.failRead = false
		return nil, errInjected
	}
	return s.Store.ListTurns(ctx, userID, sessionID, from)
}

// openInterleaved opens session s1 of u1 on e's store through an
// interleavedStore, as a second process would.
func openInterleaved(t *testing.T, e *env) (*keeper.Session, *interleavedStore) {
	t.Helper()
	st := &interleavedStore{Store: e.st}
	k, err := keeper.New(st, e.k.Config())
	require.NoError(t, err)
	s, err := k.Open(context.Background(), "u1", "s1")
	require.NoError(t, err)
	return s, st
}

// Another process adds a turn and records a prune of its own while this
// one prunes: this one's record conflicts, and the session document it
// reloads counts a turn it has not read. That turn is read with this
// process's next one, so it is in the context and reaches an interaction.
func TestTurnAddedElsewhereDuringAPruneIsKept(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, func(c *keeper.Config) { c.K, c.ActiveTurns = 2, 1 })
	other := e.openSession(t, "u1", "s1")
	s, st := openInterleaved(t, e)
	addTurns(t, s, 1, 2)
	st.elsewhere = func() {
		addTurns(t, other, 3, 3)
		_, err := other.Prune(ctx) // records turns 1-2 pruned, having seen 3
		require.NoError(t, err)
	}
	res, err := s.Prune(ctx)
	require.NoError(t, err)
	require.Len(t, res, 1)
	assert.Equal(t, 3, s.State().TurnCounter, "the reloaded document counts turn 3")

	addTurns(t, s, 4, 4)
	assert.Equal(t, []int{2, 3, 4}, seqs(s.State().Turns), "the turn added elsewhere is in the context")
	_, err = s.End(ctx)
	require.NoError(t, err)
	assertOnce(t, coverage(t, e.st, "u1", "s1"), 4)
}

// A turn added after turns added elsewhere is stored even when the read of
// those turns fails; they are read again before the next prune, which
// misses none of them.
func TestTurnsAddedElsewhereAreReadAfterAFailedRead(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, func(c *keeper.Config) { c.K, c.ActiveTurns = 2, 1 })
	other := e.openSession(t, "u1", "s1")
	s, st := openInterleaved(t, e)
	addTurns(t, other, 1, 2)
	st.failRead = true
	addTurns(t, s, 3, 3)
	assert.Equal(t, []int{3}, seqs(s.State().Turns), "turns 1-2 not read")

	res, err := s.Prune(ctx)
	require.NoError(t, err)
	require.Len(t, res, 1)
	assert.Equal(t, [2]int{1, 2}, [2]int{res[0].Interaction.FirstTurn, res[0].Interaction.LastTurn})
	addTurns(t, s, 4, 4)
	_, err = s.End(ctx)
	require.NoError(t, err)
	assertOnce(t, coverage(t, e.st, "u1", "s1"), 4)
}
