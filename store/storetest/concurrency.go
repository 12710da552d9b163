package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

func testConcurrency(t *testing.T, s *suite) {
	t.Run("PutAndSearch", func(t *testing.T) {
		st := s.fresh(t)
		const workers, each = 8, 6
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			errs []error
		)
		fail := func(err error) {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
		start := make(chan struct{})
		for w := range workers {
			user := []string{alice, bob}[w%2]
			wg.Go(func() {
				<-start
				for i := range each {
					id := fmt.Sprintf("w%d-%d", w, i)
					v := vec(1, float32(w), float32(i))
					in := interaction(id, fmt.Sprintf("s%d", w), at(i), "zebra concurrent "+id)
					in.ContentVector = v
					if err := st.PutInteraction(ctx(t), user, in); err != nil {
						fail(fmt.Errorf("PutInteraction %s: %w", id, err))
					}
					n := insight(id, at(i), "zebra concurrent "+id)
					n.InsightVector = v
					if err := st.PutInsight(ctx(t), user, n); err != nil {
						fail(fmt.Errorf("PutInsight %s: %w", id, err))
					}
					ss := session(id, at(i), "zebra concurrent "+id)
					if err := st.PutSession(ctx(t), user, ss); err != nil {
						fail(fmt.Errorf("PutSession %s: %w", id, err))
					}
					q := store.SearchRequest{Text: "zebra " + id, Vector: v, TopK: 3}
					if hits, err := st.SearchInteractions(ctx(t), user, q); err != nil {
						fail(fmt.Errorf("SearchInteractions: %w", err))
					} else if len(hits) == 0 || hits[0].Doc.ID != id || hits[0].Doc.UserID != user {
						fail(fmt.Errorf("SearchInteractions %s: own document not first: %v", id, HitIDs(hits)))
					}
					if _, err := st.SearchInsights(ctx(t), user, q); err != nil {
						fail(fmt.Errorf("SearchInsights: %w", err))
					}
					if _, err := st.ListInteractions(ctx(t), user, store.InteractionFilter{Limit: 5}); err != nil {
						fail(fmt.Errorf("ListInteractions: %w", err))
					}
					if _, err := st.GetSession(ctx(t), user, id); err != nil {
						fail(fmt.Errorf("GetSession %s: %w", id, err))
					}
				}
			})
		}
		close(start)
		wg.Wait()
		require.Empty(t, errs)
		for _, user := range []string{alice, bob} {
			ints, err := st.ListInteractions(ctx(t), user, store.InteractionFilter{})
			require.NoError(t, err)
			assert.Len(t, ints, workers/2*each, user)
			ins, err := st.ListInsights(ctx(t), user, store.InsightFilter{})
			require.NoError(t, err)
			assert.Len(t, ins, workers/2*each, user)
			sess, err := st.ListSessions(ctx(t), user, store.SessionFilter{})
			require.NoError(t, err)
			assert.Len(t, sess, workers/2*each, user)
			for _, d := range ints {
				assert.Equal(t, user, d.UserID)
			}
		}
	})
	t.Run("CreateRace", func(t *testing.T) {
		st := s.fresh(t)
		winner := sessionRace(t, st, 8, func(w int) *store.Session {
			doc := session("new", t0, fmt.Sprintf("creator %d", w))
			doc.ETag = store.CreateOnly
			return doc
		})
		got, err := st.GetSession(ctx(t), alice, "new")
		require.NoError(t, err)
		assert.Equal(t, winner.Summary, got.Summary, "the stored document is the winning create's")
		assert.Equal(t, winner.ETag, got.ETag)
	})
	t.Run("ETagRace", func(t *testing.T) {
		st := s.fresh(t)
		base := session("s1", t0, "base")
		require.NoError(t, st.PutSession(ctx(t), alice, base))
		winner := sessionRace(t, st, 12, func(w int) *store.Session {
			doc := session("s1", t0, fmt.Sprintf("writer %d", w))
			doc.ETag = base.ETag
			doc.State.TurnCounter = w
			return doc
		})
		got, err := st.GetSession(ctx(t), alice, "s1")
		require.NoError(t, err)
		assert.Equal(t, winner.Summary, got.Summary, "the stored document is the winner's")
		assert.Equal(t, winner.ETag, got.ETag)
		assert.NotEqual(t, base.ETag, got.ETag)
	})
}

// sessionRace starts n PutSession calls of alice's documents doc(0..n-1)
// at once and checks that exactly one succeeds and the others fail with
// ErrConflict. It returns the winner, with its new ETag.
func sessionRace(t *testing.T, st store.Store, n int, doc func(int) *store.Session) *store.Session {
	t.Helper()
	var (
		wg              sync.WaitGroup
		mu              sync.Mutex
		wins, conflicts int
		others          []error
		winner          *store.Session
	)
	start := make(chan struct{})
	for w := range n {
		d := doc(w)
		wg.Go(func() {
			<-start
			err := st.PutSession(ctx(t), alice, d)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
				winner = d
			case errors.Is(err, store.ErrConflict):
				conflicts++
			default:
				others = append(others, err)
			}
		})
	}
	close(start)
	wg.Wait()
	require.Empty(t, others)
	require.Equal(t, 1, wins, "exactly one write wins")
	assert.Equal(t, n-1, conflicts)
	return winner
}
