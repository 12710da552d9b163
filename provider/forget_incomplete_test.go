package provider_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// openBusy is the offline stack on a SQLite file whose checkpoints give up
// quickly when a reader holds the WAL.
func openBusy(t *testing.T) *offlineStack {
	t.Helper()
	path := sqlitetest.NewFile(t)
	st, err := sqlite.Open(context.Background(), path, sqlite.Config{Dimensions: 384, BusyTimeout: 5 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return openOfflineOn(t, st, path, func(c *provider.Config) { c.UserID = "" })
}

func talkAndEnd(t *testing.T, s *offlineStack, user, text string) string {
	t.Helper()
	ctx := context.Background()
	sess, err := s.a.NewUserSession(user)
	require.NoError(t, err)
	require.NoError(t, s.mem.Record(ctx, sess, agent.UserText(text)))
	_, err = s.mem.EndSession(ctx, sess)
	require.NoError(t, err)
	require.NoError(t, s.mem.Flush(ctx))
	return sess.ID()
}

// When a reader keeps SQLite from truncating the WAL, ForgetUser has
// still deleted and logged: it returns the receipt with its log record and
// ErrNotErased (not ErrNotLogged). CompleteForget, once the reader is gone,
// finishes the erasure, and repeating it changes nothing more.
func TestForgetUserWithTheWALHeldIsLoggedButNotErased(t *testing.T) {
	ctx := context.Background()
	s := openBusy(t)
	talkAndEnd(t, s, "dana-7f3e91", "I'm nervous about market volatility.")
	talkAndEnd(t, s, "eve-0c44d2", "I'm nervous about market volatility too.")

	release := sqlitetest.HoldWAL(t, s.st)
	rc, err := s.mem.ForgetUser(ctx, "dana-7f3e91")
	require.Error(t, err, "the WAL could not be truncated")
	assert.ErrorIs(t, err, provider.ErrNotErased)
	assert.NotErrorIs(t, err, provider.ErrNotLogged, "the record was written")
	require.NotNil(t, rc, "with what was deleted")
	assert.Positive(t, rc.Count(store.KindTurn, "deleted"))
	assert.EqualValues(t, 1, rc.LogSeq, "and its log record")
	recs, err := s.st.ListDeletions(ctx, 0, 0)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	assert.Equal(t, rc.LogHash, recs[0].Hash)
	sessions, err := s.st.ListSessions(ctx, "dana-7f3e91", store.SessionFilter{})
	require.NoError(t, err)
	assert.Empty(t, sessions, "the user is deleted")

	require.ErrorIs(t, s.mem.CompleteForget(ctx, rc), provider.ErrNotErased, "still held")
	release()
	require.NoError(t, s.mem.CompleteForget(ctx, rc))
	assert.Zero(t, sqlitetest.FileHits(t, s.path, "dana-7f3e91"), "no byte of the user id is left in the files")
	require.NoError(t, s.mem.CompleteForget(ctx, rc), "a repeat is harmless")
	recs, err = s.st.ListDeletions(ctx, 0, 0)
	require.NoError(t, err)
	assert.Len(t, recs, 1, "and logs nothing again")
	_, err = s.mem.DeletionLog().Verify(ctx)
	require.NoError(t, err)
}

// A forget call of one session whose scrub is held up likewise reports
// ErrNotErased with its logged receipt, and CompleteForget scrubs.
func TestForgetSessionWithTheWALHeldIsLoggedButNotErased(t *testing.T) {
	ctx := context.Background()
	s := openBusy(t)
	id := talkAndEnd(t, s, "dana-7f3e91", "My old 401k from Zyxwvutco holds $40,000.")

	release := sqlitetest.HoldWAL(t, s.st)
	rc, err := s.mem.ForgetSession(ctx, "dana-7f3e91", id)
	assert.ErrorIs(t, err, provider.ErrNotErased)
	assert.NotErrorIs(t, err, provider.ErrNotLogged)
	require.NotNil(t, rc)
	assert.EqualValues(t, 1, rc.LogSeq)
	release()
	require.NoError(t, s.mem.CompleteForget(ctx, rc))
	assert.Zero(t, sqlitetest.FileHits(t, s.path, "Zyxwvutco"), "the session's words are scrubbed from the files")
	recs, err := s.st.ListDeletions(ctx, 0, 0)
	require.NoError(t, err)
	assert.Len(t, recs, 1)
}
