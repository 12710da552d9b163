package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func noEnv(string) (string, bool) { return "", false }

func TestServesMemoryAndKeepsIt(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "memory.db")
	serve := func() (*mcp.ClientSession, chan error, *bytes.Buffer) {
		st, ct := mcp.NewInMemoryTransports()
		var logs bytes.Buffer
		done := make(chan error, 1)
		go func() { done <- run(ctx, []string{"-user", "dana", "-db", db}, noEnv, st, &logs) }()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
		require.NoError(t, err)
		return cs, done, &logs
	}

	cs, done, logs := serve()
	for _, args := range []map[string]any{
		{"session_id": "c1", "user": "My old 401k from Acme holds $40,000.", "assistant": "Noted."},
		{"session_id": "c1", "user": "I want to retire at 60.", "assistant": "Let's plan."},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "record_turn", Arguments: args})
		require.NoError(t, err)
		require.False(t, res.IsError)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "end_session", Arguments: map[string]any{"session_id": "c1"}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	require.NoError(t, cs.Close())
	require.NoError(t, <-done, "the server stops when the client goes")
	assert.Contains(t, logs.String(), "offline client (no LLM")
	_, err = os.Stat(db)
	require.NoError(t, err)

	// A new server on the same file finds what the first one stored.
	cs, done, _ = serve()
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_memory", Arguments: map[string]any{"query": "Acme 401k"}})
	require.NoError(t, err)
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	assert.Contains(t, string(b), "$40,000")
	require.NoError(t, cs.Close())
	require.NoError(t, <-done)
}

func TestRefusesBadFlags(t *testing.T) {
	ctx := context.Background()
	var logs bytes.Buffer
	st, _ := mcp.NewInMemoryTransports()
	err := run(ctx, []string{"-db", filepath.Join(t.TempDir(), "m.db")}, noEnv, st, &logs)
	require.ErrorContains(t, err, "-user is required")
	err = run(ctx, []string{"-user", "a/b", "-db", filepath.Join(t.TempDir(), "m.db")}, noEnv, st, &logs)
	require.ErrorContains(t, err, "UserID")
	missing := filepath.Join(t.TempDir(), "no-such-dir")
	err = run(ctx, []string{"-user", "dana", "-db", filepath.Join(missing, "m.db")}, noEnv, st, &logs)
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.ErrorContains(t, err, `directory "`+missing+`" does not exist`, "-db in a missing directory names it")
	_, statErr := os.Stat(missing)
	require.ErrorIs(t, statErr, fs.ErrNotExist, "the directory is not created")
	env := map[string]string{"AZURE_OPENAI_ENDPOINT": "https://example.openai.azure.com"}
	err = run(ctx, []string{"-user", "dana", "-db", filepath.Join(t.TempDir(), "m.db")}, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, st, &logs)
	require.ErrorContains(t, err, "AZURE_OPENAI", "a half-configured model is an error, not the offline client")
}
