package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/lexis"
	"github.com/agentmemory/agentmemory/keeper"
	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/retrieval"
)

// piece is one piece of the memory a model received, with its citation.
type piece struct {
	cite string
	text string
}

// received is the memory one run's model was given: the memory block
// with its pieces, and the memories retrieved for the message (injected
// by automatic retrieval, or returned by retrieve_user_facts).
type received struct {
	block     string
	blockPart []piece
	retrieved []piece
}

// all returns every piece the model received.
func (r received) all() []piece { return append(append([]piece(nil), r.blockPart...), r.retrieved...) }

// receivedOf reads what the provider injected into a run and what
// retrieve_user_facts returned in it; man is the run's manifest, which
// names the documents of the block.
func receivedOf(injected, produced []agent.Message, man keeper.Manifest) received {
	var r received
	for _, m := range injected {
		if m.Source != provider.SourceID || m.Role != agent.RoleSystem {
			continue
		}
		if strings.HasPrefix(m.Text, "<memory>") {
			r.block = m.Text
			r.blockPart = blockPieces(m.Text, man)
		} else {
			r.retrieved = append(r.retrieved, memoryPieces(m.Text, "retrieved")...)
		}
	}
	for _, m := range produced {
		if m.Role == agent.RoleTool && m.Name == retrieval.ToolName {
			r.retrieved = append(r.retrieved, memoryPieces(m.Text, retrieval.ToolName+" answer")...)
		}
	}
	return r
}

// blockPieces splits the memory block into its documents, each cited by
// the manifest's id and date.
func blockPieces(block string, man keeper.Manifest) []piece {
	var profile, cumulative string
	var summaries []string
	for _, it := range man.Items {
		switch it.Kind {
		case keeper.ItemProfile:
			profile = fmt.Sprintf("profile %s, %s", it.ID, day(it.Time))
		case keeper.ItemSessionSummary:
			summaries = append(summaries, fmt.Sprintf("session summary %s, %s", it.ID, day(it.Time)))
		case keeper.ItemCumulativeSummary:
			cumulative = "summary of this conversation"
		}
	}
	var out []piece
	section := ""
	for _, l := range strings.Split(block, "\n") {
		if name, ok := strings.CutPrefix(l, "### "); ok {
			section = name
			continue
		}
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "<") {
			continue
		}
		switch section {
		case "Key Insights":
			out = appendTo(out, profile, l)
		case "Conversation Summary":
			out = appendTo(out, cumulative, l)
		case "Recent Session Summaries":
			cite := "session summary"
			if len(summaries) > 0 {
				cite, summaries = summaries[0], summaries[1:]
			}
			if _, text, ok := strings.Cut(l, " UTC: "); ok {
				l = text
			}
			out = append(out, piece{cite: cite, text: l})
		}
	}
	return out
}

// appendTo adds a line to the last piece when it has the same citation.
func appendTo(out []piece, cite, line string) []piece {
	if n := len(out); n > 0 && out[n-1].cite == cite {
		out[n-1].text += "\n" + line
		return out
	}
	return append(out, piece{cite: cite, text: line})
}

// memoryPieces reads a fenced <memories> block: one cited line a memory
// ("- [id, date, kind] text"), or an answer in prose cited as source.
func memoryPieces(text, source string) []piece {
	inner, ok := prompts.Blocks(text)[prompts.BlockMemories]
	if !ok {
		inner = text
	}
	var out []piece
	for _, l := range strings.Split(inner, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(l, "- ["); ok {
			if cite, text, ok := strings.Cut(rest, "] "); ok {
				out = append(out, piece{cite: cite, text: text})
				continue
			}
		}
		out = appendTo(out, source, l)
	}
	return out
}

// fact is what a scenario claims reaches the model: every term in one
// sentence of the memory it received.
type fact struct {
	what  string
	terms []string
}

// find returns the first sentence holding every term of f and the
// citations of all the pieces that hold one.
func find(pieces []piece, f fact) (sentence string, cites []string) {
	for _, p := range pieces {
		for _, s := range sentences(p.text) {
			if containsAll(s, f.terms) {
				if sentence == "" {
					sentence = s
				}
				cites = append(cites, p.cite)
				break
			}
		}
	}
	return sentence, cites
}

func containsAll(s string, terms []string) bool {
	low := strings.ToLower(s)
	for _, t := range terms {
		if !strings.Contains(low, strings.ToLower(t)) {
			return false
		}
	}
	return true
}

// sentences splits a memory's text: its summary, its messages (" / " or
// line breaks between them), then their sentences.
func sentences(text string) []string {
	var out []string
	for _, seg := range strings.FieldsFunc(strings.NewReplacer(" | ", "\n", " / ", "\n").Replace(text), func(r rune) bool { return r == '\n' }) {
		out = append(out, lexis.Sentences(seg)...)
	}
	return out
}

// snippet returns the sentences of text that share a content word with
// query, "…" marking what is left out; the first sentence when none does.
func snippet(text, query string) string {
	q := lexis.NewTermSet(query)
	all := sentences(text)
	keep := make([]bool, len(all))
	some := false
	for i, s := range all {
		keep[i] = q.Overlap(s) > 0
		some = some || keep[i]
	}
	if !some && len(all) > 0 {
		keep[0] = true
	}
	var parts []string
	last := -1
	for i, s := range all {
		if !keep[i] {
			continue
		}
		if i > last+1 {
			parts = append(parts, "…")
		}
		parts = append(parts, s)
		last = i
	}
	if last < len(all)-1 {
		parts = append(parts, "…")
	}
	return strings.Join(parts, " ")
}

// wrap writes text after label at most width columns wide, the lines
// after the first indented to the label's width, or to the width of the
// demo's labels ("context:   ") when the label is longer.
func wrap(w io.Writer, label, text string) {
	n := min(len([]rune(label)), len([]rune("context:   ")))
	wrapIndent(w, label, strings.Repeat(" ", n), text)
}

// wrapIndent writes text after first, its further lines after indent.
func wrapIndent(w io.Writer, first, indent, text string) {
	const width = 100
	for i, para := range strings.Split(text, "\n") {
		line := first
		if i > 0 {
			line = indent
		}
		n := len([]rune(line))
		start := true
		for _, word := range strings.Fields(para) {
			if !start && n+1+len([]rune(word)) > width {
				fmt.Fprintln(w, line)
				line, n, start = indent, len([]rune(indent)), true
			}
			if !start {
				line += " "
				n++
			}
			line += word
			n += len([]rune(word))
			start = false
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
}
