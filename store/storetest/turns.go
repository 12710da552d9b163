package storetest

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

// turn returns a one-message turn of a session.
func turn(id, session string, hours int, text string) *store.Turn {
	return &store.Turn{ID: id, SessionID: session, Time: at(hours),
		Messages: []store.TurnMessage{{ID: id + "-m", Role: "user", Content: text}}}
}

func turnSeqs(ts []*store.Turn) []int {
	return each(ts, func(t *store.Turn) int { return t.Seq })
}

func testTurns(t *testing.T, s *suite) {
	t.Run("AppendNumbersInOrder", func(t *testing.T) {
		st := s.fresh(t)
		for i := range 3 {
			tr := turn(fmt.Sprintf("t%d", i), "s1", i, fmt.Sprintf("message %d", i))
			require.NoError(t, st.AppendTurn(ctx(t), alice, tr))
			assert.Equal(t, i+1, tr.Seq, "turn %d", i)
			assert.Equal(t, alice, tr.UserID, "empty user id filled in")
		}
		full := turn("t3", "s1", 3, "with everything")
		full.Messages = append(full.Messages, store.TurnMessage{ID: "t3-a", Role: "assistant", Name: "advisor", Content: "cut…", OriginalBytes: 5000})
		full.Metadata = map[string]string{"tools": `[{"name":"x"}]`}
		require.NoError(t, st.AppendTurn(ctx(t), alice, full))
		require.Equal(t, 4, full.Seq)

		got, err := st.ListTurns(ctx(t), alice, "s1", 1)
		require.NoError(t, err)
		require.Equal(t, []int{1, 2, 3, 4}, turnSeqs(got))
		last := got[3]
		assert.Equal(t, "t3", last.ID)
		assert.Equal(t, "s1", last.SessionID)
		assert.Equal(t, alice, last.UserID)
		assert.Equal(t, canon(at(3)), canon(last.Time))
		assert.Equal(t, full.Messages, last.Messages)
		assert.Equal(t, full.Metadata, last.Metadata)

		tail, err := st.ListTurns(ctx(t), alice, "s1", 3)
		require.NoError(t, err)
		assert.Equal(t, []int{3, 4}, turnSeqs(tail))
		none, err := st.ListTurns(ctx(t), alice, "s1", 5)
		require.NoError(t, err)
		assert.NotNil(t, none)
		assert.Empty(t, none)
	})

	t.Run("RepeatIsNoOp", func(t *testing.T) {
		st := s.fresh(t)
		require.NoError(t, st.AppendTurn(ctx(t), alice, turn("a", "s1", 0, "first")))
		require.NoError(t, st.AppendTurn(ctx(t), alice, turn("b", "s1", 1, "second")))
		again := turn("a", "s1", 5, "first, retried")
		again.Seq = 3 // even with a later hint, the stored number wins
		require.NoError(t, st.AppendTurn(ctx(t), alice, again))
		assert.Equal(t, 1, again.Seq)
		got, err := st.ListTurns(ctx(t), alice, "s1", 0)
		require.NoError(t, err)
		require.Len(t, got, 2)
		assert.Equal(t, "first", got[0].Messages[0].Content, "the stored turn is kept, not replaced")
	})

	t.Run("SeqHint", func(t *testing.T) {
		st := s.fresh(t)
		tr := turn("a", "s1", 0, "resumed at six")
		tr.Seq = 6
		require.NoError(t, st.AppendTurn(ctx(t), alice, tr))
		assert.Equal(t, 6, tr.Seq)
		next := turn("b", "s1", 1, "then seven")
		next.Seq = 2 // a stale hint never goes back
		require.NoError(t, st.AppendTurn(ctx(t), alice, next))
		assert.Equal(t, 7, next.Seq)
	})

	t.Run("SessionsAndUsersApart", func(t *testing.T) {
		st := s.fresh(t)
		require.NoError(t, st.AppendTurn(ctx(t), alice, turn("a", "s1", 0, "alice one")))
		require.NoError(t, st.AppendTurn(ctx(t), alice, turn("a", "s2", 0, "alice two")))
		b := turn("a", "s1", 0, "bob one")
		require.NoError(t, st.AppendTurn(ctx(t), bob, b))
		assert.Equal(t, 1, b.Seq, "numbering is per user and session")
		got, err := st.ListTurns(ctx(t), bob, "s1", 0)
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, "bob one", got[0].Messages[0].Content)

		// Turns are not sessions: they never show up as session documents.
		require.NoError(t, st.PutSession(ctx(t), alice, session("s1", at(0), "zebra session")))
		ss, err := st.ListSessions(ctx(t), alice, store.SessionFilter{})
		require.NoError(t, err)
		assert.Equal(t, []string{"s1"}, sessionIDs(ss))
		hits, err := st.SearchSessions(ctx(t), alice, store.SearchRequest{Text: "alice zebra one"})
		require.NoError(t, err)
		for _, h := range hits {
			assert.Equal(t, "s1", h.Doc.ID)
		}

		require.NoError(t, st.DeleteUser(ctx(t), alice))
		gone, err := st.ListTurns(ctx(t), alice, "s1", 0)
		require.NoError(t, err)
		assert.Empty(t, gone, "DeleteUser removes turns")
		kept, err := st.ListTurns(ctx(t), bob, "s1", 0)
		require.NoError(t, err)
		assert.Len(t, kept, 1, "another user's turns stay")
	})

	t.Run("ConcurrentAppends", func(t *testing.T) {
		st := s.fresh(t)
		const writers, each = 4, 8
		var wg sync.WaitGroup
		errs := make(chan error, writers*each)
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					tr := turn(fmt.Sprintf("w%d-%d", w, i), "s1", i, "x")
					tr.Seq = i + 1 // every writer starts from a stale hint
					if err := st.AppendTurn(ctx(t), alice, tr); err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		got, err := st.ListTurns(ctx(t), alice, "s1", 0)
		require.NoError(t, err)
		require.Len(t, got, writers*each, "no append lost")
		for i, tr := range got {
			assert.Equal(t, i+1, tr.Seq, "numbers are 1..n without gaps or repeats")
		}
	})

	t.Run("Invalid", func(t *testing.T) {
		st := s.fresh(t)
		for name, tr := range map[string]*store.Turn{
			"no id":       {SessionID: "s1", Messages: []store.TurnMessage{{Content: "x"}}},
			"no session":  {ID: "a", Messages: []store.TurnMessage{{Content: "x"}}},
			"no messages": {ID: "a", SessionID: "s1"},
			"bad session": {ID: "a", SessionID: "a/b", Messages: []store.TurnMessage{{Content: "x"}}},
			"other user":  {ID: "a", SessionID: "s1", UserID: bob, Messages: []store.TurnMessage{{Content: "x"}}},
			"too big":     {ID: "a", SessionID: "s1", Messages: []store.TurnMessage{{Content: strings.Repeat("x", store.MaxDocumentBytes)}}},
		} {
			assert.ErrorIs(t, st.AppendTurn(ctx(t), alice, tr), store.ErrInvalid, name)
		}
		assert.ErrorIs(t, st.AppendTurn(ctx(t), alice, nil), store.ErrInvalid, "nil")
		_, err := st.ListTurns(ctx(t), alice, "", 0)
		assert.ErrorIs(t, err, store.ErrInvalid, "empty session id")
		got, err := st.ListTurns(ctx(t), alice, "s1", 0)
		require.NoError(t, err)
		assert.Empty(t, got, "nothing invalid was stored")
	})
}
