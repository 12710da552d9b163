package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
)

// obedient answers the check's requests as an instruction-following model
// does: the tool call asked for, then the tool's result; the JSON values
// asked for; "pong" otherwise.
func obedient(r fakeopenai.Request) fakeopenai.Reply {
	msgs := r.Chat.Messages
	last := msgs[len(msgs)-1]
	rf := string(r.Chat.ResponseFormat)
	switch {
	case last.Role == "tool":
		return fakeopenai.Text(last.Content).WithUsage(60, 5)
	case len(r.Chat.Tools) > 0:
		return fakeopenai.ToolCalls(fakeopenai.Call("call_1", r.Chat.Tools[0].Function.Name, `{"name":"heron"}`)).WithUsage(80, 12)
	case strings.Contains(rf, `"json_object"`):
		return fakeopenai.JSON(`{"city":"Lisbon","year":1755}`).WithUsage(50, 10)
	case strings.Contains(rf, `"json_schema"`):
		return fakeopenai.JSON(`{"code":"ORCHID","count":12}`).WithUsage(50, 10)
	}
	return fakeopenai.Text("pong").WithUsage(30, 2)
}

// lexicalServer is a fake OpenAI-compatible server whose chat models obey
// and whose embedding model serves the lexical embedder's vectors.
func lexicalServer(t *testing.T, opts ...fakeopenai.Option) (*fakeopenai.Server, map[string]string) {
	t.Helper()
	srv := fakeopenai.New(t, opts...)
	srv.HandleChat(obedient)
	e, err := lexical.New(lexical.Config{})
	require.NoError(t, err)
	srv.HandleEmbeddings(func(r fakeopenai.Request) fakeopenai.Reply {
		vs, err := e.Embed(context.Background(), r.Embeddings.Input)
		if err != nil {
			return fakeopenai.Error(400, err.Error())
		}
		return fakeopenai.Embeddings(vs...)
	})
	env := map[string]string{
		"OPENAI_BASE_URL": srv.URL(), "OPENAI_CHAT_MODEL": "gpt-4.1", "OPENAI_MINI_MODEL": "gpt-4.1-mini",
		"OPENAI_EMBEDDING_MODEL": "lexical-served", "OPENAI_EMBEDDING_DIMENSIONS": strconv.Itoa(e.Dimensions()),
	}
	return srv, env
}

func lookupIn(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

func runCmd(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(t.Context(), args, &out, &errOut, lookupIn(env))
	return code, out.String(), errOut.String()
}

func TestCheckAgainstTheFakeServer(t *testing.T) {
	srv, env := lexicalServer(t)
	db := filepath.Join(t.TempDir(), "memory.db")
	code, out, errOut := runCmd(t, env, "check", "-db", db)
	require.Equal(t, exitOK, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	for _, want := range []string{
		"models: model compatible " + srv.URL() + " chat=gpt-4.1 mini=gpt-4.1-mini embedding=lexical-served (384 dimensions)",
		"store:  SQLite file " + db,
		"chat model: gpt-4.1", "mini model: gpt-4.1-mini", "embedding model: lexical-served, 384 dimensions",
		"ok    tool calling", "ok    JSON mode", "ok    structured output", "ok    similarity", "ok    round trip",
		"similarity calibration", "result: no check failed",
	} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "fail ")
	if os.Getenv("AGENTMEMORY_SHOW_CHECK") != "" {
		t.Logf("captured report:\n%s", strings.ReplaceAll(out, db, "memory.db"))
	}

	// -json: the same report for machines.
	code, out, _ = runCmd(t, env, "check", "-db", db, "-json")
	require.Equal(t, exitOK, code)
	var rep struct {
		OK       bool `json:"ok"`
		Offline  bool `json:"offline"`
		Sections []struct {
			Name   string `json:"name"`
			Checks []struct {
				Name, Status string
			} `json:"checks"`
		} `json:"sections"`
		Calibration struct {
			Gap float64 `json:"gap"`
		} `json:"calibration"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	assert.True(t, rep.OK)
	assert.False(t, rep.Offline)
	require.Len(t, rep.Sections, 4)
	assert.Equal(t, "store", rep.Sections[3].Name)
	assert.Positive(t, rep.Calibration.Gap)
}

func TestCheckNamesWhatTheServerLacks(t *testing.T) {
	for name, opt := range map[string]fakeopenai.Option{
		"tool calling": fakeopenai.WithoutToolCalling(),
		"JSON mode":    fakeopenai.WithoutJSONMode(),
	} {
		t.Run(name, func(t *testing.T) {
			_, env := lexicalServer(t, opt)
			code, out, _ := runCmd(t, env, "check")
			assert.Equal(t, exitFailed, code, out)
			assert.Contains(t, out, "fail  "+name)
			assert.Contains(t, out, "check(s) failed: chat model: "+name)
			assert.Contains(t, out, "SQLite, a new temporary file")
		})
	}
}

func TestCheckOffline(t *testing.T) {
	code, out, errOut := runCmd(t, nil, "check")
	require.Equal(t, exitOK, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, "offline: no model configured; showing the offline defaults")
	assert.Contains(t, out, "skip  model")
	assert.Contains(t, out, "embedding model: lexical-v1-384, 384 dimensions")
	assert.Contains(t, out, "result: no check failed")

	// -offline ignores a configured model.
	_, env := lexicalServer(t)
	code, out, _ = runCmd(t, env, "check", "-offline")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "offline: no model configured")
}

func TestCheckConfigurationErrors(t *testing.T) {
	code, _, errOut := runCmd(t, map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}, "check")
	assert.Equal(t, exitFailed, code)
	assert.Contains(t, errOut, "OPENAI_CHAT_MODEL", "a half-configured model names the variable")

	// A store that cannot open is a failed check; the models are still
	// checked. (An unreachable Cosmos DB endpoint is not tried here: its
	// SDK waits a minute whatever the context says.)
	_, env := lexicalServer(t)
	missing := filepath.Join(t.TempDir(), "no-such-dir", "memory.db")
	code, out, _ := runCmd(t, env, "check", "-db", missing)
	assert.Equal(t, exitFailed, code)
	assert.Contains(t, out, "store:  SQLite file "+missing)
	assert.Contains(t, out, "fail  reachable          cannot open")
	assert.Contains(t, out, "result: 1 check(s) failed: store: reachable")
	assert.Contains(t, out, "ok    tool calling", "the models are still checked")
}

func TestUsage(t *testing.T) {
	code, _, errOut := runCmd(t, nil)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "check    check that the configured models and store work")
	code, _, errOut = runCmd(t, nil, "nope")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `unknown command "nope"`)
	code, _, _ = runCmd(t, nil, "check", "-calls", "0")
	assert.Equal(t, exitUsage, code)
	code, _, _ = runCmd(t, nil, "check", "extra")
	assert.Equal(t, exitUsage, code)
	code, _, _ = runCmd(t, nil, "help")
	assert.Equal(t, exitOK, code)
}
