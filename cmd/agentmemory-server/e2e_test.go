package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/cosmostest"
	"github.com/agentmemory/agentmemory/internal/longtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	cosmostest.Stop()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// e2eInstallHint installs the official SDKs the end-to-end tests drive.
const e2eInstallHint = "npm ci --prefix cmd/agentmemory-server/e2e"

func inCI() bool {
	v := strings.ToLower(strings.TrimSpace(os.Getenv("CI")))
	return v != "" && v != "0" && v != "false"
}

// unavailable skips t, or fails it when CI is set.
func unavailable(t *testing.T, why string) {
	t.Helper()
	msg := why + "; the official SDK end-to-end tests skip (fail when CI is set); to run them, install Node.js 20+ and run " + e2eInstallHint
	if inCI() {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// selfSigned writes a certificate for 127.0.0.1 and its key into dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "agentmemory-server e2e"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600))
	return certFile, keyFile
}

// TestOfficialSDK drives the server with the official JavaScript SDK, npm
// @azure/ai-projects 2.8.0 (pinned in e2e/package-lock.json), through all
// 14 memory store operations, over HTTPS with an API key sent as a Bearer
// token: on SQLite, and on the Cosmos-protocol test server.
func TestOfficialSDK(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { officialSDK(t, nil) })
	t.Run("cosmos", func(t *testing.T) {
		db := cosmostest.DatabaseFor(t) // skips without the Cosmos test server (fails in CI)
		officialSDK(t, map[string]string{"AZURE_COSMOS_ENDPOINT": cosmostest.Endpoint(t), "AZURE_COSMOS_KEY": cosmostest.Key, "AZURE_COSMOS_DATABASE": db})
	})
}

func officialSDK(t *testing.T, environment map[string]string) {
	out, logs := runE2E(t, environment, "e2e.js", filepath.Join("@azure", "ai-projects"))
	for _, op := range sdkOperations {
		require.Contains(t, out, "ok "+op+"\n")
	}
	require.Contains(t, out, "E2E OK")
	if environment["AZURE_COSMOS_ENDPOINT"] != "" {
		require.Contains(t, logs, "memory=\"Azure Cosmos DB", "served on Cosmos DB")
	} else {
		require.Contains(t, logs, "memory=\"SQLite file")
	}
}

// TestOfficialMCPSDK drives the server's /mcp/{store}/{scope} endpoint with
// the official MCP TypeScript SDK client, npm @modelcontextprotocol/sdk
// 1.32.2 (pinned in e2e/package-lock.json), over streamable HTTP with an API
// key sent as a Bearer token: it lists the tools, records two turns, ends
// the session, finds what was said with search_memory and
// retrieve_user_facts, sees the same memory through the Memory Store API and
// not from another scope, and is refused with a wrong key.
func TestOfficialMCPSDK(t *testing.T) {
	out, _ := runE2E(t, nil, "mcp.js", filepath.Join("@modelcontextprotocol", "sdk"))
	for _, step := range []string{"connect", "list_tools", "record_turn", "end_session", "search_memory",
		"retrieve_user_facts", "same_memory", "scope_isolated", "wrong_key_refused"} {
		require.Contains(t, out, "ok "+step+"\n")
	}
	require.Contains(t, out, "MCP E2E OK")
}

// TestOfficialSDKOnReplicas drives the server with the same script as
// TestOfficialSDK through a round-robin reverse proxy (HTTPS, as a load
// balancer terminating TLS) in front of three server processes on one
// store, a SQLite file and the Cosmos-protocol test server: every request
// of the SDK, its update pollers' included, goes to the next replica, so
// an update is accepted by one replica, run by any and polled on the
// others, and a search continues on another replica than the one that
// made it. The Cosmos half runs in the long mode (as in CI).
func TestOfficialSDKOnReplicas(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { officialSDKOnReplicas(t, sqliteBackend(t)) })
	t.Run("cosmos", func(t *testing.T) {
		if !longtest.Enabled(t) {
			t.Skipf("the official SDK through the proxy on Cosmos runs with %s=1 (as in CI)", longtest.Env)
		}
		officialSDKOnReplicas(t, cosmosBackend(t))
	})
}

func officialSDKOnReplicas(t *testing.T, b backend) {
	node, dir := e2eScript(t, filepath.Join("@azure", "ai-projects"))
	procs := startReplicas(t, b, 3, map[string]string{"AGENTMEMORY_SERVER_KEYS": e2eKey}, "-trust-forwarded")
	certFile, keyFile := selfSigned(t, t.TempDir())
	lb := newRoundRobin(t, procs, certFile, keyFile)
	out, err := runScript(t, node, dir, "e2e.js", lb.url, certFile)
	if err != nil {
		for _, p := range procs {
			t.Logf("%s's log:\n%s", p.id, p.logs(t))
		}
		t.Fatalf("e2e.js through the proxy: %v", err)
	}
	for _, op := range sdkOperations {
		require.Contains(t, out, "ok "+op+"\n")
	}
	require.Contains(t, out, "E2E OK")
	for i, p := range procs {
		served := lb.served[i].Load()
		t.Logf("%s served %d requests", p.id, served)
		assert.Positive(t, served, "every replica served requests")
	}
	assert.Positive(t, lb.polls.Load(), "the update pollers poll through the proxy (Operation-Location is its address)")
}

// roundRobin is a reverse proxy serving HTTPS that sends each request to
// the next of its replicas, as a load balancer does.
type roundRobin struct {
	url    string
	served []atomic.Int64 // requests sent to each replica
	polls  atomic.Int64   // of them, GETs of an update
}

// newRoundRobin serves a round-robin proxy to procs with the certificate
// of certFile and keyFile, until t ends. It sets the X-Forwarded headers
// that -trust-forwarded reads.
func newRoundRobin(t *testing.T, procs []*serverProc, certFile, keyFile string) *roundRobin {
	t.Helper()
	targets := make([]*url.URL, len(procs))
	for i, p := range procs {
		u, err := url.Parse(p.base)
		require.NoError(t, err)
		targets[i] = u
	}
	lb := &roundRobin{served: make([]atomic.Int64, len(procs))}
	var next atomic.Uint64
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		i := (next.Add(1) - 1) % uint64(len(targets))
		lb.served[i].Add(1)
		if r.In.Method == http.MethodGet && strings.Contains(r.In.URL.Path, "/updates/") {
			lb.polls.Add(1)
		}
		r.SetURL(targets[i])
		r.SetXForwarded()
	}}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(proxy)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	lb.url = srv.URL
	return lb
}

// sdkOperations are the operations e2e.js checks, one "ok" line each.
var sdkOperations = []string{"create", "get", "update", "list", "update_memories", "get_update_result", "previous_update_id", "search_memories",
	"list_memories", "create_memory", "get_memory", "update_memory", "delete_memory", "delete_scope", "delete"}

// e2eKey is the API key the end-to-end tests' servers accept.
const e2eKey = "e2e-key-0123456789"

// e2eScript returns the node command and the e2e/ directory, whose npm
// package pkg (under e2e/node_modules) a script needs; without them it
// skips t (fails it in CI).
func e2eScript(t *testing.T, pkg string) (node, dir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable(t, "Node.js not found")
	}
	dir, err = filepath.Abs("e2e")
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
		unavailable(t, "the npm package "+filepath.ToSlash(pkg)+" is not installed in cmd/agentmemory-server/e2e")
	}
	return node, dir
}

// runScript runs the Node script of e2e/ against the server at endpoint
// (https, its certificate in certFile) with e2eKey, and returns its
// output, which it also logs.
func runScript(t *testing.T, node, dir, script, endpoint, certFile string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTMEMORY_E2E_ENDPOINT="+endpoint, "AGENTMEMORY_E2E_KEY="+e2eKey, "NODE_EXTRA_CA_CERTS="+certFile)
	raw, err := cmd.CombinedOutput()
	t.Logf("%s:\n%s", script, raw)
	return string(raw), err
}

// runE2E starts the server over HTTPS with an API key (on SQLite, or on what
// environment configures) and runs the Node script of e2e/ against it; pkg
// is the npm package under e2e/node_modules the script needs; flags are
// added to the server's command line. It returns
// the script's output and the server's log, and stops the server.
func runE2E(t *testing.T, environment map[string]string, script, pkg string, flags ...string) (out, serverLog string) {
	node, dir := e2eScript(t, pkg)
	tmp := t.TempDir()
	certFile, keyFile := selfSigned(t, tmp)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := newSyncBuffer()
	listening := make(chan string, 1)
	done := make(chan error, 1)
	vars := map[string]string{"AGENTMEMORY_SERVER_KEYS": e2eKey}
	for k, v := range environment {
		vars[k] = v
	}
	go func() {
		args := []string{"-addr", "127.0.0.1:0", "-db", filepath.Join(tmp, "m.db"), "-tls-cert", certFile, "-tls-key", keyFile}
		done <- run(ctx, append(args, flags...), env(vars), logs, listening)
	}()
	var addr string
	select {
	case addr = <-listening:
	case err := <-done:
		t.Fatalf("server stopped: %v\n%s", err, logs.String())
	}
	out, err := runScript(t, node, dir, script, "https://"+addr, certFile)
	if err != nil {
		t.Fatalf("%s failed: %v\nserver log:\n%s", script, err, logs.String())
	}
	cancel()
	require.NoError(t, <-done)
	return out, logs.String()
}
