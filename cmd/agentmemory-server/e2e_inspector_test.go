package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// chromiumPath is where Debian's chromium package puts the browser
// (.ci/run installs it); AGENTMEMORY_CHROMIUM names another.
func chromiumPath() string {
	if p := os.Getenv("AGENTMEMORY_CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

// TestInspectorInBrowser drives the memory inspector in headless Chromium
// (Debian's, through npm playwright-core 1.65.1, pinned in
// e2e/package-lock.json): it records turns for two users of two memory
// stores, each with its own key, through the API; signs in with the
// first key; finds an insight, follows it to its source session, forgets
// it and reads the receipt; checks the profile no longer shows it, that
// the other user's pages answer 403 and never show their memory, and
// that no page fetched anything from elsewhere. Screenshots of the main
// pages are written to $AGENTMEMORY_ARTIFACTS/inspector, or to a
// temporary directory the test logs.
func TestInspectorInBrowser(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable(t, "Node.js not found")
	}
	chromium := chromiumPath()
	if _, err := os.Stat(chromium); err != nil {
		unavailable(t, "Chromium not found at "+chromium+" (apt-get install chromium; .ci/run installs it)")
	}
	dir, err := filepath.Abs("e2e")
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core", "package.json")); err != nil {
		unavailable(t, "the npm package playwright-core is not installed in cmd/agentmemory-server/e2e")
	}
	artifacts := t.TempDir()
	if a := os.Getenv("AGENTMEMORY_ARTIFACTS"); a != "" {
		artifacts = filepath.Join(a, "inspector")
		require.NoError(t, os.MkdirAll(artifacts, 0o755))
	}
	t.Logf("screenshots in %s", artifacts)

	const keyA, keyB = "alpha-e2e-key-0123456789", "beta-e2e-key-0123456789"
	tmp := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := newSyncBuffer()
	listening := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		args := []string{"-addr", "127.0.0.1:0", "-db", filepath.Join(tmp, "m.db"), "-offline", "-poll-interval", "50ms"}
		done <- run(ctx, args, env(map[string]string{"AGENTMEMORY_SERVER_KEYS": keyA + " alpha," + keyB + " beta"}), logs, listening)
	}()
	var addr string
	select {
	case addr = <-listening:
	case err := <-done:
		t.Fatalf("server stopped: %v\n%s", err, logs.String())
	}
	nctx, ncancel := context.WithTimeout(ctx, 3*time.Minute)
	defer ncancel()
	cmd := exec.CommandContext(nctx, node, "inspector.js")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTMEMORY_E2E_ENDPOINT=http://"+addr, "AGENTMEMORY_E2E_KEY_A="+keyA, "AGENTMEMORY_E2E_KEY_B="+keyB,
		"AGENTMEMORY_E2E_ARTIFACTS="+artifacts, "AGENTMEMORY_E2E_CHROMIUM="+chromium, "AGENTMEMORY_E2E_PROFILE="+filepath.Join(tmp, "chromium-profile"),
		"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1")
	raw, err := cmd.CombinedOutput()
	t.Logf("inspector.js:\n%s", raw)
	if err != nil {
		t.Fatalf("inspector.js failed: %v\nserver log:\n%s", err, logs.String())
	}
	out := string(raw)
	for _, step := range []string{"record_two_users", "sign_in", "overview", "find_insight", "source_session", "forget_receipt",
		"profile_without_it", "other_user_never_shown", "nothing_fetched_elsewhere"} {
		require.Contains(t, out, "ok "+step+"\n")
	}
	require.Contains(t, out, "INSPECTOR E2E OK")
	for _, shot := range []string{"03-scope-overview", "05-insight", "06-source-session", "08-receipt", "12-other-store-refused"} {
		fi, err := os.Stat(filepath.Join(artifacts, shot+".png"))
		require.NoError(t, err, "screenshot %s", shot)
		require.Positive(t, fi.Size())
	}
	cancel()
	require.NoError(t, <-done)
}
