package doctest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// adkModule is the import path that sends a snippet to the ADK module.
const adkModule = "github.com/agentmemory/agentmemory/integrations/adk"

// goPackageDir writes code as the one file of a new package directory
// inside the module that builds it (integrations/adk when the code
// imports that module, the root module otherwise), removed when the test
// ends. It returns the module's directory and the package's, relative to
// it ("./_doctest-…").
func goPackageDir(t *testing.T, code string) (module, pkg string) {
	t.Helper()
	module = repoRoot
	if strings.Contains(code, `"`+adkModule+`"`) {
		module = filepath.Join(repoRoot, "integrations", "adk")
	}
	// A directory starting with "_" is left out of ./... patterns, so a
	// run of the whole tree meanwhile does not meet it.
	dir, err := os.MkdirTemp(module, "_doctest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "snippet.go"), []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	return module, "./" + filepath.Base(dir)
}

var packageClause = regexp.MustCompile(`(?m)^package [a-z][a-z0-9_]*\s*$`)

func TestGoSnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every snippet with the go command")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command on PATH: %v", err)
	}
	var all []block
	for _, b := range docBlocks(t) {
		if b.lang == "go" {
			all = append(all, b)
		}
	}
	if len(all) == 0 {
		t.Fatal("no go snippet found in README.md or docs/: the extraction is broken")
	}
	for _, s := range all {
		t.Run(fmt.Sprintf("%s:%d", s.file, s.line), func(t *testing.T) {
			if !packageClause.MatchString(s.code) {
				t.Fatalf("%s:%d: a go snippet must be a whole file, starting with a package clause", s.file, s.line)
			}
			module, pkg := goPackageDir(t, s.code)
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, goTool, "vet", pkg)
			cmd.Dir = module
			cmd.Env = append(os.Environ(), "GOWORK=off")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s:%d: the snippet does not compile (go vet: %v):\n%s\n--- snippet ---\n%s",
					s.file, s.line, err, out, s.code)
			}
		})
	}
}

// mdLink matches an inline Markdown link or image: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

func TestRelativeLinksResolve(t *testing.T) {
	checked := 0
	for _, f := range docFiles(t) {
		text, err := os.ReadFile(filepath.Join(repoRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(text), "\n") {
			for _, m := range mdLink.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				if strings.Contains(target, "#") {
					t.Errorf("%s:%d: link %q has an anchor: link to the page, anchors are not checked", f, i+1, target)
					continue
				}
				path := filepath.Join(repoRoot, filepath.Dir(f), filepath.FromSlash(target))
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: link %q points to nothing: %v", f, i+1, target, err)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found in README.md or docs/: the extraction is broken")
	}
}

// TestEveryPageLinkedFromREADME holds README.md to being the front door:
// every page of docs/ is one click away from it.
func TestEveryPageLinkedFromREADME(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{}
	for _, m := range mdLink.FindAllStringSubmatch(string(readme), -1) {
		linked[filepath.ToSlash(filepath.Clean(m[1]))] = true
	}
	for _, f := range docFiles(t)[1:] {
		if !linked[filepath.ToSlash(f)] {
			t.Errorf("README.md does not link %s", f)
		}
	}
}
