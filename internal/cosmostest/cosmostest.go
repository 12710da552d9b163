// Package cosmostest runs a Cosmos DB for NoSQL test server for the tests of
// a package: the stock @vercel/cosmosdb-server, extended by our launcher
// (server/launcher.js) with VectorDistance, full-text search as the service
// documents it (words stemmed, English stopwords dropped, arrays of strings
// not searched), ORDER BY on expressions, ORDER BY RANK RRF, OFFSET/LIMIT,
// partition-scoped queries and 404s for missing items, on 127.0.0.1 over
// plain HTTP. Container creation is refused as the service refuses it
// (server/provisioning.js): vector indexes in a database with shared
// throughput, more dimensions than an index type supports (flat 505,
// quantizedFlat and diskANN 4,096), and, on an account of NewAccount without
// the capability, vector or full-text policies.
//
// # Use
//
// Use it from TestMain:
//
//	func TestMain(m *testing.M) { cosmostest.Main(m) }
//
//	func TestX(t *testing.T) {
//		db := cosmostest.NewDatabase(t) // its own database, deleted after the test
//		...
//	}
//
// The server starts once per test binary, on first use, on a free port, and
// stops when Main returns (or, without Main, when the test binary exits: the
// launcher quits when its stdin closes). Tests skip, with a message saying
// how to install them, when Node.js or the npm packages are missing, except
// when the environment variable CI is set: then that is a failure. The
// first such test of a binary gives the reason; the others refer to it.
// CheckWithoutServer checks that a package's tests behave so.
//
// # Environment
//
// COSMOSTEST_NODE names the node binary (default: node on
// PATH); COSMOSTEST_SERVER_DIR the launcher directory (default:
// internal/cosmostest/server under the module root, found by walking up from
// the working directory to go.mod); COSMOSTEST_LOG=1 makes the launcher log
// every request (method, path, partition key, status) to stderr.
package cosmostest

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// Key is the account key the server accepts: the Cosmos DB emulator's
// well-known key. The server does not check signatures; azcosmos needs a
// valid base64 key to sign with.
const Key = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

// InstallHint is the command that installs the server's npm packages, run
// from the module root.
const InstallHint = "npm ci --prefix internal/cosmostest/server"

const startTimeout = 60 * time.Second

// errUnavailable marks a start failure that skips tests outside CI.
var errUnavailable = errors.New("cosmostest: Cosmos test server unavailable")

var (
	mu       sync.Mutex
	started  bool
	srv      *server
	startErr error
	// told is set once a test has been skipped or failed with startErr in
	// full: later tests give a short reason, so a package whose server is
	// missing says why once, not once per test.
	told bool
)

type server struct {
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	endpoint string
	done     chan struct{}
}

// Main runs the tests of m and stops the server, if one was started, before
// exiting with m.Run's code. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop stops the server if it is running. Later calls to Endpoint start a
// new one.
func Stop() {
	mu.Lock()
	defer mu.Unlock()
	if srv != nil {
		srv.stop()
	}
	srv, started, startErr, told = nil, false, nil, false
}

// Endpoint returns the server's endpoint, "http://127.0.0.1:PORT", starting
// the server on first use. It skips tb when Node.js or the npm packages are
// missing (fails in CI), and fails it when the server does not start. The
// first test of a binary to skip or fail this way gives the reason in full;
// later ones refer to it.
//
// A test that runs subtests against the server should call Endpoint before
// them: then it skips as a whole, and nothing it checks after its subtests
// runs on skipped ones.
func Endpoint(tb testing.TB) string {
	tb.Helper()
	mu.Lock()
	defer mu.Unlock()
	if !started {
		started = true
		srv, startErr = start(nil)
	}
	if startErr != nil {
		msg := startErr.Error()
		if told {
			msg = "cosmostest: " + reasonGiven
		}
		told = true
		if errors.Is(startErr, errUnavailable) && !inCI() {
			tb.Skip(msg)
		}
		tb.Fatal(msg)
	}
	return srv.endpoint
}

// Capabilities of an account that Account can leave out.
const (
	// CapabilityVectorSearch is the NoSQL vector search capability: without
	// it the account refuses a container with a vector embedding policy or
	// vector indexes.
	CapabilityVectorSearch = "EnableNoSQLVectorSearch"
	// CapabilityFullTextSearch is the NoSQL full-text search capability of
	// the older documentation: without it the account refuses a container
	// with a full-text policy or full-text indexes.
	CapabilityFullTextSearch = "EnableNoSQLFullTextSearch"
)

// Account describes the account a server of its own models (see
// NewAccount). The zero value has every capability.
type Account struct {
	// Without lists the capabilities the account lacks
	// (CapabilityVectorSearch, CapabilityFullTextSearch).
	Without []string
}

// NewAccount starts a server of tb's own that models acct, and returns its
// endpoint; the server stops when tb ends. It skips or fails tb as
// Endpoint does when the server cannot run. Every server, shared or not,
// refuses what the service refuses whatever the account: vector indexes in
// a database with shared throughput, and more dimensions than an index type
// supports (flat 505, quantizedFlat and diskANN 4,096).
func NewAccount(tb testing.TB, acct Account) string {
	tb.Helper()
	Endpoint(tb) // skips or fails as the shared server does
	// The shared server has passed the launcher's self-check on the same
	// packages.
	args := []string{"--skip-self-check"}
	for _, c := range acct.Without {
		args = append(args, "--without-capability", c)
	}
	s, err := start(args)
	if err != nil {
		tb.Fatalf("cosmostest: account %+v: %v", acct, err)
	}
	tb.Cleanup(s.stop)
	return s.endpoint
}

// reasonGiven is the short reason of every skip or failure after the first.
const reasonGiven = "Cosmos test server unavailable; the first test that used it says why"

// NewClient returns an azcosmos client for the server, with key
// authentication and few, fast retries. It is closed when tb ends.
func NewClient(tb testing.TB) *azcosmos.Client {
	tb.Helper()
	endpoint := Endpoint(tb)
	cred, err := azcosmos.NewKeyCredential(Key)
	if err != nil {
		tb.Fatalf("cosmostest: key credential: %v", err)
	}
	c, err := azcosmos.NewClientWithKey(endpoint, cred, &azcosmos.ClientOptions{
		ClientOptions: azcore.ClientOptions{
			Retry: policy.RetryOptions{MaxRetries: 2, RetryDelay: 10 * time.Millisecond, MaxRetryDelay: 100 * time.Millisecond},
		},
	})
	if err != nil {
		tb.Fatalf("cosmostest: client: %v", err)
	}
	tb.Cleanup(c.Close)
	return c
}

// NewDatabase creates a database with a unique name for tb and deletes it
// when tb ends.
func NewDatabase(tb testing.TB) *azcosmos.DatabaseClient {
	tb.Helper()
	c := NewClient(tb)
	name := DatabaseName(tb)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: name}, nil); err != nil {
		tb.Fatalf("cosmostest: create database %q: %v", name, err)
	}
	db, err := c.NewDatabase(name)
	if err != nil {
		tb.Fatalf("cosmostest: database client %q: %v", name, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := db.Delete(ctx, nil); err != nil {
			tb.Errorf("cosmostest: delete database %q: %v", name, err)
		}
	})
	return db
}

// DatabaseFor returns a database name of tb's own (DatabaseName) for the
// code under test to create on the shared server, and deletes that
// database, if it was created, when tb ends. It skips tb without the
// server, as NewClient does.
func DatabaseFor(tb testing.TB) string {
	tb.Helper()
	c := NewClient(tb)
	name := DatabaseName(tb)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if db, err := c.NewDatabase(name); err == nil {
			_, _ = db.Delete(ctx, nil) // not found: never created
		}
	})
	return name
}

// DatabaseName returns a unique, valid database name derived from tb's name.
func DatabaseName(tb testing.TB) string {
	var b strings.Builder
	for _, r := range tb.Name() {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := b.String()
	if len(name) > 48 {
		name = name[:48]
	}
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	return name + "-" + hex.EncodeToString(suffix[:])
}

// withoutServerEnv marks the child process of CheckWithoutServer.
const withoutServerEnv = "COSMOSTEST_WITHOUT_SERVER"

// CheckWithoutServer runs the tests of this test binary that match the
// -test.run pattern run again, twice, in child processes that find no
// server (an empty launcher directory), as on a fresh clone without the npm
// packages. It fails t unless, with CI unset, the child passes, at least
// one test skips and the reason with the install hint is given exactly
// once; and, with CI=true, the child fails with that reason. Every package
// whose tests use the server should check itself this way, so that none of
// its tests fails, or passes on nothing, when the server is missing.
//
// In the child, CheckWithoutServer skips t.
func CheckWithoutServer(t *testing.T, run string) {
	t.Helper()
	if os.Getenv(withoutServerEnv) != "" {
		t.Skip("cosmostest: in the child of CheckWithoutServer")
	}
	empty := t.TempDir()
	for _, ci := range []string{"", "true"} {
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run="+run, "-test.v", "-test.count=1")
		cmd.Env = append(environWithout("CI", "COSMOSTEST_SERVER_DIR", withoutServerEnv),
			withoutServerEnv+"=1", "COSMOSTEST_SERVER_DIR="+empty, "CI="+ci)
		out, err := cmd.CombinedOutput()
		hints := strings.Count(string(out), InstallHint)
		if ci == "" {
			if err != nil || hints != 1 || !strings.Contains(string(out), "--- SKIP: ") {
				t.Errorf("without the server and CI unset, -test.run=%s must pass, skipping with the install hint once: exit %v, %d hints; output without passes, skips and short reasons:\n%s", run, err, hints, outline(out))
			}
			continue
		}
		if err == nil || hints == 0 {
			t.Errorf("without the server and CI=true, -test.run=%s must fail with the install hint: exit %v, %d hints; output without passes, skips and short reasons:\n%s", run, err, hints, outline(out))
		}
	}
}

// outline returns a child's verbose test output without the lines that
// say nothing on a failure: test starts, passes, skips and short reasons.
func outline(out []byte) string {
	var b strings.Builder
	for line := range strings.Lines(string(out)) {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "=== ") || strings.HasPrefix(trimmed, "--- PASS") || strings.HasPrefix(trimmed, "--- SKIP") || strings.HasSuffix(trimmed, reasonGiven) {
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}

// environWithout returns the environment without the named variables.
func environWithout(names ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, name) {
			env = append(env, kv)
		}
	}
	return env
}

func inCI() bool {
	v := strings.ToLower(strings.TrimSpace(os.Getenv("CI")))
	return v != "" && v != "0" && v != "false"
}

// serverDir finds the launcher directory.
func serverDir() (string, error) {
	if d := os.Getenv("COSMOSTEST_SERVER_DIR"); d != "" {
		return d, nil
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	for _, dir := range starts {
		for d := dir; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				return filepath.Join(d, "internal", "cosmostest", "server"), nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return "", fmt.Errorf("cosmostest: no go.mod above %v", starts)
}

func start(args []string) (*server, error) {
	dir, err := serverDir()
	if err != nil {
		return nil, err
	}
	node := os.Getenv("COSMOSTEST_NODE")
	if node == "" {
		node = "node"
	}
	nodePath, err := exec.LookPath(node)
	if err != nil {
		return nil, fmt.Errorf("%w: Node.js not found (%v); the Cosmos DB tests skip (fail when CI is set); to run them, install Node.js 20+ and run %s", errUnavailable, err, InstallHint)
	}
	for _, pkg := range []string{"@vercel/cosmosdb-server", "@zeit/cosmosdb-query"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
			return nil, fmt.Errorf("%w: npm packages not installed (no %s in %s); the Cosmos DB tests skip (fail when CI is set); to run them, install the packages with %s", errUnavailable, pkg, filepath.Join(dir, "node_modules"), InstallHint)
		}
	}

	cmd := exec.Command(nodePath, append([]string{filepath.Join(dir, "launcher.js"), "--port", "0", "--exit-on-stdin-close"}, args...)...)
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr := &tail{w: os.Stderr}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cosmostest: start %s: %w", nodePath, err)
	}
	s := &server{cmd: cmd, stdin: stdin, done: make(chan struct{})}

	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if ep, ok := strings.CutPrefix(sc.Text(), "LISTENING "); ok {
				lines <- strings.TrimSpace(ep)
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	waitErr := make(chan error, 1)
	go func() {
		waitErr <- cmd.Wait()
		close(s.done)
	}()

	select {
	case ep := <-lines:
		s.endpoint = ep
		return s, nil
	case err := <-waitErr:
		return nil, fmt.Errorf("cosmostest: launcher exited before listening (%v):\n%s", err, stderr.String())
	case <-time.After(startTimeout):
		s.stop()
		return nil, fmt.Errorf("cosmostest: launcher did not print LISTENING within %v:\n%s", startTimeout, stderr.String())
	}
}

func (s *server) stop() {
	_ = s.stdin.Close()
	select {
	case <-s.done:
		return
	case <-time.After(5 * time.Second):
	}
	_ = s.cmd.Process.Kill()
	<-s.done
}

// tail copies the launcher's stderr to w and keeps its last 8 KiB for error
// messages.
type tail struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 8<<10 {
		t.buf = t.buf[len(t.buf)-8<<10:]
	}
	_, _ = t.w.Write(p)
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
