package prompts

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/template"
	"time"
	"unicode/utf8"

	"github.com/agentmemory/agentmemory/agent"
)

// MarkerPrefix starts every prompt marker: the first line of a prompt's
// system message is MarkerPrefix followed by the prompt's name. It is the
// same text as llm/offline's MarkerPrefix (a test there checks it), so that
// the offline client routes each prompt to its rule-based handler.
const MarkerPrefix = "agentmemory:prompt="

// Prompt names.
const (
	NameInteractionMetadata = "interaction_metadata"
	NameCumulativeSummary   = "cumulative_summary"
	NameSessionSummary      = "session_summary"
	NameFactRetrieval       = "fact_retrieval"
	NameQueryRewrite        = "query_rewrite"
	NameSessionReflection   = "session_reflection"
	NameProfileSynthesis    = "profile_synthesis"
	NameReconcile           = "reconcile"
	NameAnswerJudge         = "answer_judge"
)

// Limits the prompts ask for and the parsers enforce.
const (
	MaxTopics              = 5   // mentioned_topics and key_topics
	MaxEntities            = 20  // entities
	MaxItemRunes           = 100 // one topic or entity; longer items are dropped
	MaxSummaryRunes        = 2000
	CumulativeSummaryWords = 100
	SessionSummaryWords    = 120
)

// maxTemplateBytes bounds a template file.
const maxTemplateBytes = 64 << 10

// templateExt is the extension of template files.
const templateExt = ".tmpl"

//go:embed templates/*.tmpl
var embedded embed.FS

// spec describes one prompt: the data blocks its user message must carry,
// whether it answers JSON, and sample data for the load-time check.
type spec struct {
	blocks []string
	json   bool
	sample func() any
}

var specs = map[string]spec{
	NameInteractionMetadata: {
		blocks: []string{BlockConversation},
		json:   true,
		sample: func() any { return metadataData(sampleTurns) },
	},
	NameCumulativeSummary: {
		blocks: []string{BlockPreviousSummary, BlockNewTurns},
		sample: func() any { return cumulativeData("The user asked about saving.", sampleTurns) },
	},
	NameSessionSummary: {
		blocks: []string{BlockSummarySoFar, BlockLastTurns},
		json:   true,
		sample: func() any { return sessionData("The user asked about saving.", sampleTurns) },
	},
	NameFactRetrieval: {
		blocks: []string{BlockRequest},
		sample: func() any { return retrievalData("What does the user save each month?", sampleToday) },
	},
	NameQueryRewrite: {
		blocks: []string{BlockRecentTurns, BlockQuestion},
		sample: func() any { return rewriteData(sampleTurns, "And what about later?") },
	},
	NameSessionReflection: {
		blocks: []string{BlockSessions, BlockCategories},
		json:   true,
		sample: func() any {
			return reflectionData([]ReflectionSession{{ID: "s1", Start: sampleToday, Turns: sampleTurns}}, sampleCategories)
		},
	},
	NameProfileSynthesis: {
		blocks: []string{BlockProfile, BlockNewInsights},
		sample: func() any {
			return profileData("The user saves 10% of their salary.", []InsightLine{{Label: "i1", Date: sampleToday, Category: "preference", Confidence: 0.9, Text: "The user prefers index funds."}})
		},
	},
	NameAnswerJudge: {
		blocks: []string{BlockQuestion, BlockGoldAnswer, BlockResponse},
		json:   true,
		sample: func() any {
			return judgeData("Where does the user's sister live?", "Lisbon", "She moved to Lisbon last year.")
		},
	},
	NameReconcile: {
		blocks: []string{BlockInsights},
		json:   true,
		sample: func() any {
			return reconcileData([]InsightLine{{Label: "i1", Date: sampleToday, Category: "preference", Confidence: 0.9, Text: "The user prefers index funds."}})
		},
	},
}

var sampleCategories = []Category{{Name: "preference", Description: "how the user likes things done"}}

var sampleToday = time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)

var sampleTurns = []Turn{{Role: "user", Text: "How much should I save?"}, {Role: "assistant", Text: "Start with 10%."}}

// Names returns the names of every prompt, sorted.
func Names() []string {
	names := make([]string, 0, len(specs))
	for n := range specs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Marker returns the marker line of the prompt named name.
func Marker(name string) string { return MarkerPrefix + name }

// Set is a loaded set of prompt templates: the embedded ones, some perhaps
// overridden from a directory. A Set is immutable and safe for concurrent
// use.
type Set struct {
	tmpls   map[string]*template.Template
	sources map[string]string
}

// defaultSet parses the embedded templates once.
var defaultSet = sync.OnceValue(func() *Set {
	s, err := load(nil, "")
	if err != nil {
		panic(fmt.Sprintf("prompts: embedded templates: %v", err)) // a build defect, caught by the tests
	}
	return s
})

// Default returns the embedded prompt set.
func Default() *Set { return defaultSet() }

// Dir returns the embedded prompt set with every template found in the
// directory dir overriding the embedded template of the same name: a file
// "<name>.tmpl" for each prompt name (see Names). Other files are ignored,
// but a ".tmpl" file that names no prompt is refused, as is a template
// that does not parse, does not start with the prompt's marker line,
// lacks its "user" template or loses a data block (see FS).
func Dir(dir string) (*Set, error) {
	if dir == "" {
		return nil, errors.New("prompts: Dir: empty directory path")
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("prompts: override directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("prompts: override directory %s: not a directory", dir)
	}
	return load(os.DirFS(dir), dir)
}

// FS is Dir for the top directory of fsys.
//
// An override template is a text/template file. Its first non-blank line
// must be the marker line, Marker(name), exactly and with nothing else on
// it; the main template renders the system message and a template defined
// as "user" ({{define "user"}}…{{end}}) renders the user message. Copy the
// embedded file (prompts/templates/<name>.tmpl) as a starting point: it
// shows the fields each prompt offers. Data fields arrive already fenced
// and neutralised. At load, each template is rendered once with sample
// data, and refused unless the system message still starts with the
// marker and the user message still carries each data block of the prompt.
func FS(fsys fs.FS) (*Set, error) {
	if fsys == nil {
		return nil, errors.New("prompts: FS: nil file system")
	}
	return load(fsys, "")
}

// load parses the embedded templates, then the overrides found in fsys
// (nil: none); root prefixes file names in errors.
func load(fsys fs.FS, root string) (*Set, error) {
	s := &Set{tmpls: make(map[string]*template.Template, len(specs)), sources: make(map[string]string, len(specs))}
	for _, name := range Names() {
		file := "templates/" + name + templateExt
		src, err := embedded.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("prompts: embedded %s: %w", file, err)
		}
		t, err := parse(name, file, src)
		if err != nil {
			return nil, err
		}
		s.tmpls[name], s.sources[name] = t, "embedded:"+file
	}
	if fsys == nil {
		return s, nil
	}
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("prompts: read override directory %s: %w", root, err)
	}
	for _, e := range entries {
		base := e.Name()
		if e.IsDir() || !strings.HasSuffix(base, templateExt) {
			continue
		}
		shown := base
		if root != "" {
			shown = filepath.Join(root, base)
		}
		name := strings.TrimSuffix(base, templateExt)
		if _, ok := specs[name]; !ok {
			return nil, fmt.Errorf("prompts: override %s: no prompt is named %q (known: %s)", shown, name, strings.Join(Names(), ", "))
		}
		src, err := readLimited(fsys, base)
		if err != nil {
			return nil, fmt.Errorf("prompts: override %s: %w", shown, err)
		}
		t, err := parse(name, shown, src)
		if err != nil {
			return nil, err
		}
		s.tmpls[name], s.sources[name] = t, shown
	}
	return s, nil
}

func readLimited(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, maxTemplateBytes+1))
	if err != nil {
		return nil, err
	}
	if len(src) > maxTemplateBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxTemplateBytes)
	}
	return src, nil
}

// parse parses and checks the template of the prompt name read from file.
func parse(name, file string, src []byte) (*template.Template, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("prompts: template %s: "+format, append([]any{file}, args...)...)
	}
	if !utf8.Valid(src) {
		return nil, fail("not valid UTF-8")
	}
	text := string(src)
	if first := firstLine(text); first != Marker(name) {
		return nil, fail("first line must be the marker %q, found %q", Marker(name), clip(first, 80))
	}
	t, err := template.New(name).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fail("%w", err)
	}
	if t.Lookup("user") == nil {
		return nil, fail(`no {{define "user"}} template for the user message`)
	}
	sp := specs[name]
	r, err := execute(name, t, sp.sample())
	if err != nil {
		return nil, fail("rendering sample data: %w", err)
	}
	if first := firstLine(r.System); first != Marker(name) {
		return nil, fail("rendered system message must start with the marker line %q, starts with %q", Marker(name), clip(first, 80))
	}
	blocks := Blocks(r.User)
	for _, b := range sp.blocks {
		if _, ok := blocks[b]; !ok {
			return nil, fail("rendered user message lacks the <%s> data block", b)
		}
	}
	return t, nil
}

// firstLine returns the first non-blank line of text, trimmed of spaces,
// tabs and carriage returns.
func firstLine(text string) string {
	for line := range strings.Lines(text) {
		if line = strings.Trim(line, " \t\r\n"); line != "" {
			return line
		}
	}
	return ""
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// Source returns where the template of the prompt name came from: a file
// path for an override, "embedded:templates/<name>.tmpl" otherwise, and ""
// for an unknown name.
func (s *Set) Source(name string) string { return s.sources[name] }

// Rendered is a rendered prompt: a system message that starts with the
// prompt's marker line and holds the instructions, and a user message that
// holds the data blocks.
type Rendered struct {
	// Name is the prompt's name.
	Name string
	// System is the system message.
	System string
	// User is the user message.
	User string
	// JSON reports that the prompt asks for a JSON object.
	JSON bool
}

// Messages returns the system and user messages.
func (r Rendered) Messages() []agent.Message {
	return []agent.Message{agent.SystemText(r.System), agent.UserText(r.User)}
}

// Request returns a chat request for the prompt: its messages, and JSON
// mode (agent.JSONObject) when the prompt answers JSON. Callers may set
// Temperature or MaxTokens on it.
func (r Rendered) Request() *agent.ChatRequest {
	req := &agent.ChatRequest{Messages: r.Messages()}
	if r.JSON {
		req.ResponseFormat = &agent.ResponseFormat{Type: agent.JSONObject}
	}
	return req
}

func execute(name string, t *template.Template, data any) (Rendered, error) {
	var sys, user strings.Builder
	if err := t.Execute(&sys, data); err != nil {
		return Rendered{}, err
	}
	if err := t.ExecuteTemplate(&user, "user", data); err != nil {
		return Rendered{}, err
	}
	return Rendered{
		Name:   name,
		System: strings.TrimSpace(sys.String()),
		User:   strings.TrimSpace(user.String()),
		JSON:   specs[name].json,
	}, nil
}

func (s *Set) render(name string, data any) (Rendered, error) {
	t := s.tmpls[name]
	if t == nil {
		return Rendered{}, fmt.Errorf("prompts: no template %q", name)
	}
	r, err := execute(name, t, data)
	if err != nil {
		return Rendered{}, fmt.Errorf("prompts: render %s (%s): %w", name, s.sources[name], err)
	}
	return r, nil
}

// countTurns returns how many turns have non-blank text.
func countTurns(turns []Turn) int {
	n := 0
	for _, t := range turns {
		if strings.TrimSpace(t.Text) != "" {
			n++
		}
	}
	return n
}

// MetadataData is what the interaction_metadata template sees.
type MetadataData struct {
	// Conversation is the <conversation> block.
	Conversation string
	// MessageCount is the number of messages in it.
	MessageCount int
	// MaxTopics is the most topics to ask for.
	MaxTopics int
}

func metadataData(turns []Turn) MetadataData {
	return MetadataData{
		Conversation: Fence(BlockConversation, FormatTurns(turns)),
		MessageCount: countTurns(turns),
		MaxTopics:    MaxTopics,
	}
}

// InteractionMetadata renders the interaction_metadata prompt for a chunk
// of conversation. Its answer parses with ParseInteractionMetadata. It
// fails when no turn has text.
func (s *Set) InteractionMetadata(turns []Turn) (Rendered, error) {
	if countTurns(turns) == 0 {
		return Rendered{}, errors.New("prompts: interaction_metadata: no turn with text")
	}
	return s.render(NameInteractionMetadata, metadataData(turns))
}

// CumulativeData is what the cumulative_summary template sees.
type CumulativeData struct {
	// PreviousSummary is the <previous_summary> block (empty for the first
	// update).
	PreviousSummary string
	// NewTurns is the <new_turns> block.
	NewTurns string
	// MessageCount is the number of messages in NewTurns.
	MessageCount int
	// MaxWords is the length to ask for.
	MaxWords int
}

func cumulativeData(previous string, turns []Turn) CumulativeData {
	return CumulativeData{
		PreviousSummary: Fence(BlockPreviousSummary, previous),
		NewTurns:        Fence(BlockNewTurns, FormatTurns(turns)),
		MessageCount:    countTurns(turns),
		MaxWords:        CumulativeSummaryWords,
	}
}

// CumulativeSummary renders the cumulative_summary prompt: fold the newly
// pruned turns into the previous running summary ("" for none). Its answer
// parses with ParseCumulativeSummary. It fails when no turn has text.
func (s *Set) CumulativeSummary(previous string, turns []Turn) (Rendered, error) {
	if countTurns(turns) == 0 {
		return Rendered{}, errors.New("prompts: cumulative_summary: no new turn with text")
	}
	return s.render(NameCumulativeSummary, cumulativeData(previous, turns))
}

// SessionData is what the session_summary template sees.
type SessionData struct {
	// SummarySoFar is the <summary_so_far> block (possibly empty).
	SummarySoFar string
	// LastTurns is the <last_turns> block (possibly empty).
	LastTurns string
	// MessageCount is the number of messages in LastTurns.
	MessageCount int
	// MaxWords is the summary length to ask for.
	MaxWords int
	// MaxTopics is the most key topics to ask for.
	MaxTopics int
}

func sessionData(cumulative string, last []Turn) SessionData {
	return SessionData{
		SummarySoFar: Fence(BlockSummarySoFar, cumulative),
		LastTurns:    Fence(BlockLastTurns, FormatTurns(last)),
		MessageCount: countTurns(last),
		MaxWords:     SessionSummaryWords,
		MaxTopics:    MaxTopics,
	}
}

// SessionSummary renders the session_summary prompt from a session's
// running summary and its last turns. Its answer parses with
// ParseSessionSummary. It fails when both are empty.
func (s *Set) SessionSummary(cumulative string, last []Turn) (Rendered, error) {
	if countTurns(last) == 0 && strings.TrimSpace(cumulative) == "" {
		return Rendered{}, errors.New("prompts: session_summary: no summary and no turn with text")
	}
	return s.render(NameSessionSummary, sessionData(cumulative, last))
}

// InteractionMetadata renders the embedded interaction_metadata prompt.
func InteractionMetadata(turns []Turn) (Rendered, error) {
	return Default().InteractionMetadata(turns)
}

// CumulativeSummary renders the embedded cumulative_summary prompt.
func CumulativeSummary(previous string, turns []Turn) (Rendered, error) {
	return Default().CumulativeSummary(previous, turns)
}

// SessionSummary renders the embedded session_summary prompt.
func SessionSummary(cumulative string, last []Turn) (Rendered, error) {
	return Default().SessionSummary(cumulative, last)
}

// MaxQueryRunes bounds a rewritten query.
const MaxQueryRunes = 500

// RetrievalData is what the fact_retrieval template sees.
type RetrievalData struct {
	// Request is the <request> block: what the main agent asked memory for.
	Request string
	// Today is the current date, for resolving relative dates.
	Today string
}

func retrievalData(request string, today time.Time) RetrievalData {
	return RetrievalData{Request: Fence(BlockRequest, request), Today: today.UTC().Format("Monday 2 January 2006")}
}

// FactRetrieval renders the system and user messages of the retrieval
// mini-agent for one request; the agent's search tools are offered with it
// and their results come back fenced in <memories> blocks (see
// FenceMemories). The answer is plain text citing document ids and dates.
func (s *Set) FactRetrieval(request string, today time.Time) (Rendered, error) {
	if strings.TrimSpace(request) == "" {
		return Rendered{}, errors.New("prompts: fact_retrieval: empty request")
	}
	return s.render(NameFactRetrieval, retrievalData(request, today))
}

// FenceMemories fences a search tool's result text as a <memories> block,
// so that retrieved text reaches the mini-agent as data.
func FenceMemories(text string) string { return Fence(BlockMemories, text) }

// RewriteData is what the query_rewrite template sees.
type RewriteData struct {
	// RecentTurns is the <recent_turns> block.
	RecentTurns string
	// Question is the <question> block.
	Question string
}

func rewriteData(recent []Turn, question string) RewriteData {
	return RewriteData{RecentTurns: Fence(BlockRecentTurns, FormatTurns(recent)), Question: Fence(BlockQuestion, question)}
}

// QueryRewrite renders the prompt that turns a follow-up message into a
// standalone search query using the recent conversation. Its answer parses
// with ParseQuery.
func (s *Set) QueryRewrite(recent []Turn, question string) (Rendered, error) {
	if strings.TrimSpace(question) == "" {
		return Rendered{}, errors.New("prompts: query_rewrite: empty question")
	}
	return s.render(NameQueryRewrite, rewriteData(recent, question))
}

// ParseQuery reads the model's answer to the query_rewrite prompt: plain
// text, cleaned like ParseCumulativeSummary and cut to MaxQueryRunes. It
// fails, wrapping ErrUnusable, when no text is left.
func ParseQuery(out []byte) (string, error) {
	q, err := ParseCumulativeSummary(out)
	if err != nil {
		return "", fmt.Errorf("query rewrite: %w", err)
	}
	if r := []rune(q); len(r) > MaxQueryRunes {
		q = string(r[:MaxQueryRunes])
	}
	return q, nil
}

// FactRetrieval renders the fact_retrieval prompt of the default set.
func FactRetrieval(request string, today time.Time) (Rendered, error) {
	return Default().FactRetrieval(request, today)
}

// QueryRewrite renders the query_rewrite prompt of the default set.
func QueryRewrite(recent []Turn, question string) (Rendered, error) {
	return Default().QueryRewrite(recent, question)
}
