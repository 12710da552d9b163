package doctest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// repoRoot is the repository's root, two levels above this package.
const repoRoot = "../.."

// norun is the info-string word that keeps a runnable block from being
// run: ```sh norun.
const norun = "norun"

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

// kind is what the tests do with a block.
type kind int

const (
	// notRunnable blocks are not run: output examples, Python, YAML…
	notRunnable kind = iota
	// shell blocks (sh, bash, shell) run with bash -euo pipefail.
	shell
	// javascript blocks (js, javascript) run with node as ES modules.
	javascript
	// goProgram blocks are go blocks of package main: built and run.
	goProgram
)

func (k kind) String() string {
	switch k {
	case shell:
		return "shell"
	case javascript:
		return "JavaScript"
	case goProgram:
		return "Go program"
	}
	return "not runnable"
}

// block is one fenced code block of a Markdown document.
type block struct {
	file  string // relative to the repository root
	line  int    // of the opening fence
	lang  string // the info string's first word (go, sh, js…), empty without one
	norun bool   // the info string's second word is norun
	code  string
}

func (b block) String() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

var packageMain = regexp.MustCompile(`(?m)^package main\s*$`)

// kind says how the block would run, norun or not.
func (b block) kind() kind {
	switch b.lang {
	case "sh", "bash", "shell":
		return shell
	case "js", "javascript":
		return javascript
	case "go":
		if packageMain.MatchString(b.code) {
			return goProgram
		}
	}
	return notRunnable
}

// runs reports whether the tests run the block.
func (b block) runs() bool { return !b.norun && b.kind() != notRunnable }

// fencedBlocks returns the ``` fenced blocks of a Markdown document, in
// order. An info string is a language and, optionally, norun; any other
// word is an error, so that a misspelt marker does not go unnoticed.
func fencedBlocks(file string, text []byte) ([]block, error) {
	var (
		out  []block
		cur  *block
		body strings.Builder
		line int
	)
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		line++
		l := sc.Text()
		trimmed := strings.TrimSpace(l)
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			words := strings.Fields(strings.TrimPrefix(trimmed, "```"))
			cur = &block{file: file, line: line}
			body.Reset()
			if len(words) > 0 {
				cur.lang = words[0]
			}
			for _, w := range words[min(1, len(words)):] {
				if w != norun {
					return nil, fmt.Errorf("%s:%d: unknown word %q in the fence's info string: a block is fenced as ```LANG or ```LANG %s", file, line, w, norun)
				}
				cur.norun = true
			}
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
		return nil, fmt.Errorf("%s:%d: block not closed", file, cur.line)
	}
	return out, nil
}

// docBlocks returns the fenced blocks of README.md and docs/*.md, page by
// page, each page's in order.
func docBlocks(t *testing.T) []block {
	t.Helper()
	var all []block
	for _, f := range docFiles(t) {
		text, err := os.ReadFile(filepath.Join(repoRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		bs, err := fencedBlocks(f, text)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, bs...)
	}
	return all
}

func TestFencedBlocks(t *testing.T) {
	doc := "# A page\n\n```go\npackage main\n\nfunc main() {}\n```\n\ntext\n\n" +
		"```sh norun\ngo run ./demo\n```\n\n```\nplain output\n```\n\n" +
		"  ```js\n  await fetch(process.env.AGENTMEMORY_URL);\n  ```\n\n```python\nprint(1)\n```\n\n```go\npackage advisor\n```\n"
	got, err := fencedBlocks("p.md", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		line  int
		lang  string
		norun bool
		kind  kind
		runs  bool
		code  string
	}{
		{3, "go", false, goProgram, true, "package main\n\nfunc main() {}\n"},
		{11, "sh", true, shell, false, "go run ./demo\n"},
		{15, "", false, notRunnable, false, "plain output\n"},
		{19, "js", false, javascript, true, "  await fetch(process.env.AGENTMEMORY_URL);\n"},
		{23, "python", false, notRunnable, false, "print(1)\n"},
		{27, "go", false, notRunnable, false, "package advisor\n"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d blocks, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.line != w.line || g.lang != w.lang || g.norun != w.norun || g.kind() != w.kind || g.runs() != w.runs || g.code != w.code {
			t.Errorf("block %d: got line %d lang %q norun %v kind %v runs %v code %q; want line %d lang %q norun %v kind %v runs %v code %q",
				i, g.line, g.lang, g.norun, g.kind(), g.runs(), g.code, w.line, w.lang, w.norun, w.kind, w.runs, w.code)
		}
	}

	for _, bad := range []struct{ doc, want string }{
		{"```sh no-run\necho\n```\n", `p.md:1: unknown word "no-run"`},
		{"text\n```js\nconsole.log(1)\n", "p.md:2: block not closed"},
	} {
		if _, err := fencedBlocks("p.md", []byte(bad.doc)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("fencedBlocks(%q) = %v, want an error containing %q", bad.doc, err, bad.want)
		}
	}
}
