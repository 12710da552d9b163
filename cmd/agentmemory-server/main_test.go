package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/memoryservice"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestKeys(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys")
	require.NoError(t, os.WriteFile(file, []byte("# comment\nfile-key\n\nlimited-key alpha beta\n"), 0o600))
	ks, err := keys(env(map[string]string{"AGENTMEMORY_SERVER_KEYS": " a, b support ,", "AGENTMEMORY_SERVER_KEYS_FILE": file}))
	require.NoError(t, err)
	assert.Equal(t, []memoryservice.APIKey{{Key: "a", Stores: []string{}}, {Key: "b", Stores: []string{"support"}},
		{Key: "file-key", Stores: []string{}}, {Key: "limited-key", Stores: []string{"alpha", "beta"}}}, ks)
	_, err = keys(env(map[string]string{"AGENTMEMORY_SERVER_KEYS_FILE": filepath.Join(t.TempDir(), "missing")}))
	assert.ErrorContains(t, err, "AGENTMEMORY_SERVER_KEYS_FILE")
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu chan struct{}
	b  bytes.Buffer
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{mu: make(chan struct{}, 1)} }
func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu <- struct{}{}
	defer func() { <-s.mu }()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string {
	s.mu <- struct{}{}
	defer func() { <-s.mu }()
	return s.b.String()
}

func call(t testing.TB, method, url, key string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, url, rd)
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("api-key", key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

var storeBody = map[string]any{"name": "support", "definition": map[string]any{"kind": "default", "chat_model": "m", "embedding_model": "e"}}

func TestServeAndDrain(t *testing.T) {
	base, logs, stop := serveOn(t, env(map[string]string{"AGENTMEMORY_SERVER_KEYS": "serve-and-drain-key"}))
	code, _ := call(t, "GET", base+"/healthz", "", nil)
	assert.Equal(t, http.StatusOK, code)
	code, _ = call(t, "POST", base+"/memory_stores?api-version=v1", "", storeBody)
	assert.Equal(t, http.StatusUnauthorized, code)
	code, out := call(t, "POST", base+"/memory_stores?api-version=v1", "serve-and-drain-key", storeBody)
	require.Equal(t, http.StatusOK, code, "%v", out)
	require.NoError(t, stop())
	assert.Contains(t, logs.String(), "running offline", "the offline models are said at start")
	assert.Contains(t, logs.String(), "draining")
	assert.Contains(t, logs.String(), "request_id=")
}

// -trust-forwarded makes Operation-Location the proxy's address; the
// sweep and retention flags refuse what is not a positive duration.
func TestServerFlags(t *testing.T) {
	for _, bad := range [][]string{{"-sweep-interval", "0s"}, {"-update-retention", "-1h"}, {"-sweep-interval", "soon"}, {"-update-workers", "0"}} {
		err := run(context.Background(), append([]string{"-addr", "127.0.0.1:0"}, bad...), env(nil), io.Discard, nil)
		require.Error(t, err, "%v", bad)
		assert.Contains(t, err.Error(), bad[0])
	}
	base, _, stop := serveOn(t, env(nil), "-trust-forwarded", "-sweep-interval", "5s", "-update-retention", "1h")
	code, out := call(t, "POST", base+"/memory_stores?api-version=v1", "", storeBody)
	require.Equal(t, http.StatusOK, code, "%v", out)
	body := `{"scope":"alice","items":[{"type":"message","role":"user","content":"I like tea."}],"update_delay":3600}`
	req, err := http.NewRequest("POST", base+"/memory_stores/support:update_memories?api-version=v1", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-Proto", "https")
	req.Header.Set("X-Forwarded-Host", "memory.example")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	assert.True(t, strings.HasPrefix(resp.Header.Get("Operation-Location"), "https://memory.example/memory_stores/support/updates/"), resp.Header.Get("Operation-Location"))
	require.NoError(t, stop())
}

// serveOn runs the command on a loopback port and a new SQLite file (a
// copy of an empty store: creating the schema is not what these tests
// check), with lookup as its environment and args after -addr and -db, and
// returns its base URL, its logs, and stop, which ends it and returns
// run's error.
func serveOn(t *testing.T, lookup func(string) (string, bool), args ...string) (base string, logs *syncBuffer, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	logs = newSyncBuffer()
	listening := make(chan string, 1)
	done := make(chan error, 1)
	args = append([]string{"-addr", "127.0.0.1:0", "-db", sqlitetest.NewFile(t)}, args...)
	go func() { done <- run(ctx, args, lookup, logs, listening) }()
	select {
	case addr := <-listening:
		return "http://" + addr, logs, func() error { cancel(); return <-done }
	case err := <-done:
		t.Fatalf("server stopped: %v\n%s", err, logs.String())
	}
	return "", nil, nil
}

// The server processes of the tests run this command built once per
// test binary, by serverBinary, into binDir (removed by TestMain). It is
// built without the race detector, whatever the tests run with: the
// processes are killed, so no one would see its reports, and on a small
// machine the slowdown of several instrumented processes makes claims
// expire under a test's short lease while their runs go on. It is linked
// without the symbol table and debug information, as internal/doctest
// links it: linking is most of the build, and takes a third less CPU so
// (a panic's stack trace keeps its function names).
var (
	binDir       string
	serverBinary = sync.OnceValues(func() (string, error) {
		goBin, err := exec.LookPath("go")
		if err != nil {
			return "", fmt.Errorf("no go command to build the server with: %w", err)
		}
		if binDir, err = os.MkdirTemp("", "agentmemory-server-test"); err != nil {
			return "", err
		}
		bin := filepath.Join(binDir, "agentmemory-server")
		out, err := exec.Command(goBin, "build", "-ldflags=-s -w", "-o", bin, ".").CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("go build: %w\n%s", err, out)
		}
		return bin, nil
	})
)

// serverProc is a server process of a test.
type serverProc struct {
	id        string
	base      string // http://127.0.0.1:port, once started
	cmd       *exec.Cmd
	log       string // the file of its log
	listening chan string
}

// listenLine is the start of the line the server logs once it listens;
// its addr attribute is the address.
var listenLine = regexp.MustCompile(`msg="agentmemory-server: serving the Memory Store API" addr=(\S+)`)

// launchChild starts the server as process id, on a free loopback port,
// with args and, as its whole environment, environment (and PATH and
// HOME: nothing of the machine's model or store settings), logging
// into a file of logDir; wait for it with started.
func launchChild(t testing.TB, id string, args []string, environment map[string]string) *serverProc {
	t.Helper()
	bin, err := serverBinary()
	require.NoError(t, err)
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range environment {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	p := &serverProc{id: id, cmd: cmd, listening: make(chan string, 1),
		log: filepath.Join(logDir(t), fmt.Sprintf("%s-%d.log", id, time.Now().UnixNano()))}
	logs, err := os.Create(p.log)
	require.NoError(t, err)
	t.Cleanup(func() { logs.Close() })
	out, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	go func() { // the log, into its file, until the process ends
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			_, _ = logs.WriteString(line + "\n")
			if m := listenLine.FindStringSubmatch(line); m != nil {
				p.listening <- m[1]
			}
		}
	}()
	return p
}

// started waits until p listens, and fails t with its log if it does not
// within a minute.
func (p *serverProc) started(t testing.TB) {
	t.Helper()
	select {
	case addr := <-p.listening:
		p.base = "http://" + addr
	case <-time.After(time.Minute):
		t.Fatalf("server %s did not start; its log:\n%s", p.id, p.logs(t))
	}
}

// logs returns what p has logged so far.
func (p *serverProc) logs(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(p.log)
	require.NoError(t, err)
	return string(b)
}

// kill ends p with SIGKILL, as a crash would.
func (p *serverProc) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	_ = p.cmd.Wait()
}

// startChild starts a server process and waits until it listens.
func startChild(t *testing.T, id string, args []string, environment map[string]string) *serverProc {
	t.Helper()
	p := launchChild(t, id, args, environment)
	p.started(t)
	return p
}

// logDir is where the server processes log: $AGENTMEMORY_TEST_LOGS if
// set (kept for reading), else a temporary directory.
func logDir(t testing.TB) string {
	if d := os.Getenv("AGENTMEMORY_TEST_LOGS"); d != "" {
		return d
	}
	return t.TempDir()
}

// TestAcceptedUpdateSurvivesKill9: an update answered 202 and then killed
// with SIGKILL before it ran completes after the server starts again.
func TestAcceptedUpdateSurvivesKill9(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	child := startChild(t, "server", []string{"-db", db}, nil)
	base := child.base
	code, out := call(t, "POST", base+"/memory_stores", "", storeBody)
	require.Equal(t, http.StatusOK, code, "%v", out)
	// update_delay 2 s: the process dies while the update is queued.
	code, out = call(t, "POST", base+"/memory_stores/support:update_memories", "", map[string]any{
		"scope": "alice", "update_delay": 2,
		"items": []any{map[string]any{"role": "user", "content": "I prefer dark roast coffee every morning."}}})
	require.Equal(t, http.StatusAccepted, code, "%v", out)
	id := out["update_id"].(string)
	code, out = call(t, "GET", base+"/memory_stores/support/updates/"+id, "", nil)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "queued", out["status"], "killed before it ran")
	child.kill(t)

	// Its poller looks often: the update, due 2 s after its accept, is
	// found soon after, not at the default interval.
	base = startChild(t, "restarted", []string{"-db", db, "-poll-interval", "200ms"}, nil).base
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, out = call(t, "GET", base+"/memory_stores/support/updates/"+id, "", nil)
		require.Equal(t, http.StatusOK, code, "%v", out)
		if out["status"] == "completed" {
			break
		}
		require.Contains(t, []any{"queued", "in_progress"}, out["status"], "%v", out)
		require.True(t, time.Now().Before(deadline), "update still %v", out["status"])
		time.Sleep(100 * time.Millisecond)
	}
	ops := out["result"].(map[string]any)["memory_operations"].([]any)
	require.NotEmpty(t, ops)
	code, out = call(t, "POST", base+"/memory_stores/support:search_memories", "", map[string]any{
		"scope": "alice", "items": []any{map[string]any{"role": "user", "content": "coffee"}}})
	require.Equal(t, http.StatusOK, code, "%v", out)
	raw, _ := json.Marshal(out["memories"])
	assert.Contains(t, string(raw), "dark roast")
}
