package doctest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmemory/agentmemory/internal/fakeopenai"
)

// npmDir holds the npm packages JavaScript blocks import, installed by
// npmInstallHint (the memory service's end-to-end tests use them too).
var npmDir = filepath.Join(repoRoot, "cmd", "agentmemory-server", "e2e")

const npmInstallHint = "npm ci --prefix cmd/agentmemory-server/e2e"

// npmPackages are the packages a JavaScript block may import.
var npmPackages = []string{"@azure/ai-projects", "openai", "@modelcontextprotocol/sdk"}

func inCI() bool {
	v := strings.ToLower(strings.TrimSpace(os.Getenv("CI")))
	return v != "" && v != "0" && v != "false"
}

// unavailable skips t, or fails it when CI is set.
func unavailable(t *testing.T, why string) {
	t.Helper()
	msg := why + "; the docs' blocks that need it skip (fail when CI is set)"
	if inCI() {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// runner runs blocks with the tools the machine has.
type runner struct {
	goTool, bash, curl, node string             // empty when missing
	nodeModules              string             // absolute; empty when a package is missing
	missingNPM               string             // the first missing package
	programs                 map[string]program // by block (file:line), from buildAll
}

func newRunner(t *testing.T, goTool string) *runner {
	t.Helper()
	r := &runner{goTool: goTool}
	r.bash, _ = exec.LookPath("bash")
	r.curl, _ = exec.LookPath("curl")
	r.node, _ = exec.LookPath("node")
	modules, err := filepath.Abs(filepath.Join(npmDir, "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range npmPackages {
		if _, err := os.Stat(filepath.Join(modules, filepath.FromSlash(p), "package.json")); err != nil {
			r.missingNPM = p
			return r
		}
	}
	r.nodeModules = modules
	return r
}

// program is a Go program block, built.
type program struct {
	bin string
	err error // why it did not build
}

// buildAll builds agentmemory-server and every Go program block of blocks,
// side by side: linking is most of the test's time, and the machine's
// cores link at once. It returns the server's executable.
func (r *runner) buildAll(t *testing.T, blocks []block) (string, error) {
	t.Helper()
	dir := t.TempDir()
	server := filepath.Join(dir, "agentmemory-server")
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		serverErr error
	)
	r.programs = map[string]program{}
	wg.Go(func() { serverErr = goBuild(t.Context(), r.goTool, repoRoot, "./cmd/agentmemory-server", server) })
	for i, b := range blocks {
		if !b.runs() || b.kind() != goProgram {
			continue
		}
		module, pkg := goPackageDir(t, b.code)
		bin := filepath.Join(dir, fmt.Sprintf("snippet-%d", i))
		wg.Go(func() {
			err := goBuild(t.Context(), r.goTool, module, pkg, bin)
			mu.Lock()
			defer mu.Unlock()
			r.programs[b.String()] = program{bin: bin, err: err}
		})
	}
	wg.Wait()
	return server, serverErr
}

// ready skips t, or fails it in CI, when a tool b needs is missing.
func (r *runner) ready(t *testing.T, b block) {
	t.Helper()
	switch b.kind() {
	case shell:
		if r.bash == "" || r.curl == "" {
			unavailable(t, "bash or curl not found")
		}
	case javascript:
		if r.node == "" {
			unavailable(t, "Node.js not found; install Node.js 20+ and run "+npmInstallHint)
		}
		if r.nodeModules == "" {
			unavailable(t, "the npm package "+r.missingNPM+" is not installed in cmd/agentmemory-server/e2e; run "+npmInstallHint)
		}
	}
}

// check runs b against s. It must exit with success, the server must have
// answered each of its requests with a success, and a shell or JavaScript
// block must have made one request at least: one that talks to no server
// is fenced norun. It returns b's output.
func (r *runner) check(ctx context.Context, t *testing.T, s *docServer, b block) (string, error) {
	t.Helper()
	s.rec.take() // what came before is not b's
	out, err := r.exec(ctx, t, s, b)
	seen := s.rec.take()
	if err != nil {
		return out, fmt.Errorf("the %s block failed: %w", b.kind(), err)
	}
	var refused []string
	for _, e := range seen {
		if e.status >= 400 {
			refused = append(refused, e.String())
		}
	}
	if len(refused) > 0 {
		return out, fmt.Errorf("the server refused %d of the block's %d requests:\n\t%s", len(refused), len(seen), strings.Join(refused, "\n\t"))
	}
	if len(seen) == 0 && b.kind() != goProgram {
		return out, fmt.Errorf("the %s block made no request to the server: a block that is not run against the server is fenced ```%s %s", b.kind(), b.lang, norun)
	}
	return out, nil
}

// exec runs b in a directory of its own with s's environment.
func (r *runner) exec(ctx context.Context, t *testing.T, s *docServer, b block) (string, error) {
	t.Helper()
	dir := t.TempDir()
	var cmd *exec.Cmd
	switch b.kind() {
	case shell:
		f := filepath.Join(dir, "snippet.sh")
		if err := os.WriteFile(f, []byte(b.code), 0o600); err != nil {
			return "", err
		}
		// -u: a variable the docs misspell is an error, not an empty string.
		cmd = exec.CommandContext(ctx, r.bash, "-euo", "pipefail", f)
	case javascript:
		// Node resolves a module's imports from node_modules beside it.
		if err := os.Symlink(r.nodeModules, filepath.Join(dir, "node_modules")); err != nil {
			return "", err
		}
		f := filepath.Join(dir, "snippet.mjs") // an ES module: import, top-level await
		if err := os.WriteFile(f, []byte(b.code), 0o600); err != nil {
			return "", err
		}
		cmd = exec.CommandContext(ctx, r.node, f)
	case goProgram:
		p, ok := r.programs[b.String()]
		if !ok {
			return "", fmt.Errorf("the Go program %s was not built", b)
		}
		if p.err != nil {
			return "", p.err
		}
		cmd = exec.CommandContext(ctx, p.bin)
	default:
		return "", fmt.Errorf("a %s block is not run", b.kind())
	}
	cmd.Dir = dir
	cmd.Env = s.env()
	cmd.WaitDelay = 5 * time.Second // a child holding the output open does not hang the test
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestSnippetsRun runs every shell, JavaScript and Go program block of
// README.md and docs/*.md not fenced norun. Each page's blocks run in
// order, as a reader would run them, against an agentmemory-server of the
// page's own: built once, on a key, the offline models, a SQLite file in a
// temporary directory and the gateway in front of a scripted model
// endpoint, reached over HTTPS at AGENTMEMORY_URL with AGENTMEMORY_KEY.
func TestSnippetsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds agentmemory-server and runs the docs' blocks against it")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command on PATH: %v", err)
	}
	var pages []string
	byPage := map[string][]block{}
	blocks := docBlocks(t)
	for _, b := range blocks {
		if !b.runs() {
			continue
		}
		if byPage[b.file] == nil {
			pages = append(pages, b.file)
		}
		byPage[b.file] = append(byPage[b.file], b)
	}
	if len(pages) == 0 {
		t.Fatal("no runnable block found in README.md or docs/: the extraction is broken")
	}
	r := newRunner(t, goTool)
	bin, err := r.buildAll(t, blocks)
	if err != nil {
		t.Fatal(err)
	}
	upstream := fakeopenai.New(t)
	upstream.HandleChat(func(req fakeopenai.Request) fakeopenai.Reply {
		return fakeopenai.Text("Noted: " + req.LastUserText())
	})

	for _, page := range pages {
		t.Run(filepath.Base(page), func(t *testing.T) {
			s := startServer(t, bin, upstream)
			for _, b := range byPage[page] {
				t.Run(fmt.Sprintf("line_%d_%s", b.line, b.lang), func(t *testing.T) {
					r.ready(t, b)
					ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
					defer cancel()
					logged := s.logs.len()
					out, err := r.check(ctx, t, s, b)
					if err != nil {
						t.Errorf("%s: %v\n--- output ---\n%s--- block ---\n%s--- server log meanwhile ---\n%s", b, err, out, b.code, s.logs.since(logged))
						return
					}
					t.Logf("%s ran; its output:\n%s", b, out)
				})
			}
		})
	}

	// The check itself: each of these blocks is broken, and said to be.
	t.Run("broken_blocks_fail", func(t *testing.T) {
		s := startServer(t, bin, upstream)
		for _, c := range []struct{ name, code, want string }{
			{"refused", `curl -s "$AGENTMEMORY_URL/memory_stores/nowhere?api-version=v1" -H "api-key: $AGENTMEMORY_KEY"` + "\n",
				"GET /memory_stores/nowhere?api-version=v1: 404"},
			{"wrong_key", `curl -s "$AGENTMEMORY_URL/memory_stores?api-version=v1" -H "api-key: not-$AGENTMEMORY_KEY"` + "\n",
				"GET /memory_stores?api-version=v1: 401"},
			{"no_request", "echo 'talks to no server'\n", "made no request to the server"},
			{"exit_status", `curl -s "$AGENTMEMORY_URL/healthz"` + "\nexit 3\n", "exit status 3"},
			{"unset_variable", `curl -s "$AGENTMEMORY_ADDRESS/healthz"` + "\n", "unbound variable"},
		} {
			t.Run(c.name, func(t *testing.T) {
				b := block{file: "broken.md", line: 1, lang: "sh", code: c.code}
				r.ready(t, b)
				out, err := r.check(t.Context(), t, s, b)
				if err == nil {
					t.Fatalf("a broken block passed the check; output:\n%s", out)
				}
				if msg := err.Error() + "\n" + out; !strings.Contains(msg, c.want) {
					t.Errorf("the check said %q (output %q), want it to say %q", err, out, c.want)
				}
			})
		}
	})
}
