package sqlite

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

// TestReadStatementsWithEveryConnectionHeld: reads keep their statements
// prepared, and a read seeing a text for the first time never waits for a
// connection to prepare it on: with one reader connection, reads of many
// texts from many goroutines all finish (preparing on the pool from inside
// a read transaction would wait for that transaction's own connection).
func TestReadStatementsWithEveryConnectionHeld(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, newFile(t), Config{Dimensions: 4, MaxReaders: 1})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	for i := range 5 {
		require.NoError(t, s.PutSession(ctx, "u", &store.Session{ID: fmt.Sprint("s", i), StartTime: time.Now(), Summary: "a summary"}))
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 20 {
					_, err := s.GetSession(ctx, "u", fmt.Sprint("s", i%5))
					assert.NoError(t, err)
					// A filter per iteration: texts the cache has not seen.
					_, err = s.ListSessions(ctx, "u", store.SessionFilter{Limit: 1 + (g+i)%7, Status: store.SessionActive})
					assert.NoError(t, err)
				}
			})
		}
		wg.Wait()
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("reads stuck: a read waited for a connection to prepare its statement on")
	}
	get := `SELECT id, doc, summary_vector, etag FROM session_summaries WHERE user_id = ? AND id = ?`
	require.Eventually(t, func() bool {
		s.rstmts.mu.Lock()
		defer s.rstmts.mu.Unlock()
		return s.rstmts.m[get] != nil
	}, 10*time.Second, 10*time.Millisecond, "GetSession's statement is kept prepared")
	d, err := s.GetSession(ctx, "u", "s3")
	require.NoError(t, err)
	assert.Equal(t, "s3", d.ID, "and reads through it")
}

// TestLoadSavesTermsWhileWritesGoOn: a load that tokenized documents
// without terms rows (sessions without text have none) goes on to store
// their rows after the searches waiting for it have their set, while a
// write of the same user's sessions updates that set in place. The load
// stores them under the generation it loaded, not the set's, which the
// write changes (the race detector caught that read in CI, through
// tests/locomo's TestAnswerEndToEnd; this test runs the same sequence, and
// checks the searches stay right).
func TestLoadSavesTermsWhileWritesGoOn(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, newFile(t), Config{Dimensions: 4})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	for round := range 20 {
		user := fmt.Sprint("u", round)
		for i := range 20 {
			require.NoError(t, s.PutSession(ctx, user, &store.Session{ID: fmt.Sprint("bare", i), StartTime: time.Now()}))
		}
		require.NoError(t, s.PutSession(ctx, user, &store.Session{ID: "summed", StartTime: time.Now(), Summary: "quinces in autumn"}))
		hits, err := s.SearchSessions(ctx, user, store.SearchRequest{Text: "quinces", TopK: 5})
		require.NoError(t, err)
		// Written as soon as the search has its set, while the load goes
		// on to store the terms it tokenized.
		require.NoError(t, s.DeleteDocument(ctx, user, store.KindSessionSummary, "bare0"))
		require.Len(t, hits, 1)
		assert.Equal(t, "summed", hits[0].Doc.ID)
	}
	require.NoError(t, s.Close()) // waits for the loads' stores of their terms
}
