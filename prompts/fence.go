package prompts

import (
	"regexp"
	"strings"
)

// Names of the data blocks the prompts fence their data in.
const (
	BlockConversation    = "conversation"     // interaction_metadata: the chunk to index
	BlockPreviousSummary = "previous_summary" // cumulative_summary: the running summary so far
	BlockNewTurns        = "new_turns"        // cumulative_summary: the messages to fold in
	BlockSummarySoFar    = "summary_so_far"   // session_summary: the running summary
	BlockLastTurns       = "last_turns"       // session_summary: the final messages
	BlockRequest         = "request"          // fact_retrieval: what the main agent asked for
	BlockMemories        = "memories"         // fact_retrieval tool results: retrieved documents
	BlockRecentTurns     = "recent_turns"     // query_rewrite: the conversation so far
	BlockQuestion        = "question"         // query_rewrite: the message to make standalone; answer_judge: the question asked
	BlockSessions        = "sessions"         // session_reflection: the conversations to reflect on
	BlockCategories      = "categories"       // session_reflection: the insight categories, "name: description" a line
	BlockProfile         = "profile"          // profile_synthesis: the current long-term profile
	BlockNewInsights     = "new_insights"     // profile_synthesis: the session insights to fold in
	BlockInsights        = "insights"         // reconcile: the pool of insights, one a line
	BlockGoldAnswer      = "gold_answer"      // answer_judge: the reference answer
	BlockResponse        = "response"         // answer_judge: the answer to grade
)

// blockNames lists every block name; Fence neutralises all of them, so data
// fenced in one block cannot open or close another either.
var blockNames = []string{BlockConversation, BlockPreviousSummary, BlockNewTurns, BlockSummarySoFar, BlockLastTurns,
	BlockRequest, BlockMemories, BlockRecentTurns, BlockQuestion, BlockSessions, BlockCategories, BlockProfile,
	BlockNewInsights, BlockInsights, BlockGoldAnswer, BlockResponse}

// tagRE matches anything that reads as an opening or closing tag of a block:
// "<conversation>", "</conversation>", "< / CONVERSATION >"…
var tagRE = regexp.MustCompile(`(?i)<\s*/?\s*(?:` + strings.Join(blockNames, "|") + `)\b`)

// escapedLT replaces the '<' of a neutralised tag.
const escapedLT = "&lt;"

// Neutralise returns text with every tag-like occurrence of a block name
// ("<conversation>", "</new_turns>", "< /Last_Turns", any case, spaces
// allowed) defanged: its '<' becomes "&lt;". Nothing else changes, so text
// fenced with Fence cannot end its block early or start another.
func Neutralise(text string) string {
	if !strings.Contains(text, "<") {
		return text
	}
	return tagRE.ReplaceAllStringFunc(text, func(m string) string { return escapedLT + m[1:] })
}

// Fence returns content as the data block name:
//
//	<name>
//	content, neutralised, carriage returns dropped
//	</name>
//
// The tag lines stand alone; content is trimmed of surrounding blank lines,
// and an empty content gives an empty block (the opening line directly
// followed by the closing one). name must be a lower-case identifier
// ([a-z][a-z0-9_]*); Fence panics otherwise, as names are constants.
func Fence(name, content string) string {
	if !validBlockName(name) {
		panic("prompts.Fence: invalid block name " + name)
	}
	content = strings.ReplaceAll(content, "\r", "")
	content = strings.Trim(Neutralise(content), "\n")
	if strings.TrimSpace(content) == "" {
		return "<" + name + ">\n</" + name + ">"
	}
	// A content not in blockNames could still carry its own closing tag.
	if !isKnownBlock(name) {
		content = strings.ReplaceAll(content, "</"+name+">", escapedLT+"/"+name+">")
	}
	return "<" + name + ">\n" + content + "\n</" + name + ">"
}

func isKnownBlock(name string) bool {
	for _, n := range blockNames {
		if n == name {
			return true
		}
	}
	return false
}

func validBlockName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z':
		case i > 0 && ('0' <= c && c <= '9' || c == '_'):
		default:
			return false
		}
	}
	return true
}

// Blocks returns the data blocks of a rendered prompt, by name: for each
// line that is exactly "<name>" (surrounding spaces allowed) and a later
// line exactly "</name>", the text between them. Blocks do not nest: a tag
// line inside a block is content. When a name occurs twice the first block
// wins; an opening line without its closing line is not a block.
//
// Blocks is the reader of what Fence writes: Blocks(Fence(n, c))[n] is c
// neutralised, without carriage returns and trimmed of blank lines around.
func Blocks(text string) map[string]string {
	out := make(map[string]string)
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		name, ok := tagLine(lines[i], false)
		if !ok {
			continue
		}
		end := -1
		for j := i + 1; j < len(lines); j++ {
			if n, ok := tagLine(lines[j], true); ok && n == name {
				end = j
				break
			}
		}
		if end < 0 {
			continue
		}
		if _, dup := out[name]; !dup {
			out[name] = strings.Join(lines[i+1:end], "\n")
		}
		i = end
	}
	return out
}

// tagLine reports whether line is an opening (or, if closing, a closing)
// tag line and returns its name.
func tagLine(line string, closing bool) (string, bool) {
	line = strings.TrimSpace(line)
	prefix := "<"
	if closing {
		prefix = "</"
	}
	rest, ok := strings.CutPrefix(line, prefix)
	if !ok {
		return "", false
	}
	name, ok := strings.CutSuffix(rest, ">")
	if !ok || !validBlockName(name) {
		return "", false
	}
	return name, true
}

// Turn is one message of a conversation as the prompts show it: its
// author's role ("user", "assistant"…) and its text.
type Turn struct {
	Role string
	Text string
}

// FormatTurns writes turns one message per line as "role: text", the
// format of the conversation blocks. The role is lower-cased and reduced to
// ASCII letters, digits and '_' ("unknown" when nothing is left); the lines
// of a multi-line text after the first are indented by two spaces, so a
// line of text can never pass for the start of another message. Turns with
// blank text are skipped. The result is not neutralised: Fence does that.
func FormatTurns(turns []Turn) string {
	var b strings.Builder
	for _, t := range turns {
		text := strings.TrimSpace(strings.ReplaceAll(t.Text, "\r", ""))
		if text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(cleanRole(t.Role))
		b.WriteString(": ")
		for i, line := range strings.Split(text, "\n") {
			if i > 0 {
				b.WriteString("\n  ")
			}
			b.WriteString(strings.TrimRight(line, " \t"))
		}
	}
	return b.String()
}

func cleanRole(role string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(role) {
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '_' {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 || b.Len() > 32 {
		return "unknown"
	}
	return b.String()
}

// ParseTurns reads a conversation block written by FormatTurns back into
// turns: a line "role: text" whose role is a lower-case word starts a
// message, an indented line continues the current one, and any other line
// starts a message of role "unknown". Blank lines are kept inside a message.
func ParseTurns(block string) []Turn {
	var out []Turn
	for _, line := range strings.Split(block, "\n") {
		if len(out) > 0 && (strings.HasPrefix(line, "  ") || strings.TrimSpace(line) == "") {
			out[len(out)-1].Text += "\n" + strings.TrimPrefix(line, "  ")
			continue
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		role, text, ok := strings.Cut(line, ": ")
		if !ok || cleanRole(role) != role {
			role, text = "unknown", line
		}
		out = append(out, Turn{Role: role, Text: text})
	}
	for i := range out {
		out[i].Text = strings.TrimSpace(out[i].Text)
	}
	return out
}
