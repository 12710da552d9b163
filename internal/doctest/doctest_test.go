package doctest

import (
	"bufio"
	"bytes"
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

// repoRoot is the repository's root, two levels above this package.
const repoRoot = "../.."

// adkModule is the import path that sends a snippet to the ADK module.
const adkModule = "github.com/agentmemory/agentmemory/integrations/adk"

// docFiles lists README.md and docs/*.md, relative to the repository root.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatalf("listing docs: %v", err)
	}
	for _, p := range pages {
		rel, err := filepath.Rel(repoRoot, p)
		if err != nil {
			t.Fatalf("docs page %s: %v", p, err)
		}
		files = append(files, rel)
	}
	return files
}

// snippet is one fenced go block of a document.
type snippet struct {
	file string // relative to the repository root
	line int    // of the opening fence
	code string
}

// goSnippets returns the ```go blocks of a Markdown document.
func goSnippets(file string, text []byte) ([]snippet, error) {
	var (
		out  []snippet
		cur  *snippet
		body strings.Builder
		line int
	)
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		line++
		l := sc.Text()
		trimmed := strings.TrimSpace(l)
		switch {
		case cur == nil && trimmed == "```go":
			cur = &snippet{file: file, line: line}
			body.Reset()
		case cur != nil && trimmed == "```":
			cur.code = body.String()
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			body.WriteString(l)
			body.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: go block not closed", file, cur.line)
	}
	return out, nil
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
	var all []snippet
	for _, f := range docFiles(t) {
		text, err := os.ReadFile(filepath.Join(repoRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		s, err := goSnippets(f, text)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, s...)
	}
	if len(all) == 0 {
		t.Fatal("no go snippet found in README.md or docs/: the extraction is broken")
	}
	for _, s := range all {
		t.Run(fmt.Sprintf("%s:%d", s.file, s.line), func(t *testing.T) {
			if !packageClause.MatchString(s.code) {
				t.Fatalf("%s:%d: a go snippet must be a whole file, starting with a package clause", s.file, s.line)
			}
			module := repoRoot
			if strings.Contains(s.code, `"`+adkModule+`"`) {
				module = filepath.Join(repoRoot, "integrations", "adk")
			}
			// A directory starting with "_" is left out of ./... patterns,
			// so a run of the whole tree meanwhile does not meet it.
			dir, err := os.MkdirTemp(module, "_doctest-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			if err := os.WriteFile(filepath.Join(dir, "snippet.go"), []byte(s.code), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, goTool, "vet", "./"+filepath.Base(dir))
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
