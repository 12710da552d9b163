package sqlite

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

// prepared reports whether the writer keeps query prepared.
func (ws *writeStmts) prepared(query string) bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.m[query] != nil
}

// A store prepares no write statement at Open, and a write path's
// statements once a batch has run them: the next batch runs them
// prepared, and Close closes them.
func TestWriteStatementsArePreparedAfterTheirFirstBatch(t *testing.T) {
	s, _ := openTest(t)
	for q := range s.wstmts.texts {
		require.False(t, s.wstmts.prepared(q), "prepared at Open: %s", q)
	}
	r := &store.Record{ID: "update.1", Time: time.Now(), Active: true, Body: []byte(`{}`), ETag: store.CreateOnly}
	require.NoError(t, s.PutRecord(t.Context(), "registry", r))
	assert.True(t, s.wstmts.prepared(recordInsert), "the record's insert is prepared after its batch")
	assert.False(t, s.wstmts.prepared(insertTurnSQL), "a statement no batch ran is not prepared")

	r.ID, r.ETag = "update.2", store.CreateOnly
	require.NoError(t, s.PutRecord(t.Context(), "registry", r), "a write of prepared statements")
	got, err := s.GetRecord(t.Context(), "registry", "update.2")
	require.NoError(t, err)
	assert.Equal(t, "update.2", got.ID)

	require.NoError(t, s.Close())
	assert.True(t, s.wstmts.closed)
}
