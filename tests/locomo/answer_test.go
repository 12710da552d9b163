package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/llm/offline"
	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/retrieval"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// known is what the scripted answering model knows of the fixture's
// questions: the words its context must hold, besides the question, for it
// to answer ("a|b": either), and the answer it then gives. Without them it
// says the conversation does not tell.
var known = map[string]struct {
	needs  []string
	answer string
}{
	"Where does Maya's sister live?": {[]string{"Lisbon"}, "Lisbon."},
	// Memory holds the date resolved ("yesterday [2023-03-02]"), the
	// conversation the session's date.
	"When did Tom run the Boston marathon?":                     {[]string{"marathon", "2023-03-02|3 March 2023"}, "2 March 2023"},
	"Which pet did Maya adopt, and what did it learn to fetch?": {[]string{"greyhound", "frisbee"}, "A greyhound, and it learned to fetch a frisbee."},
	"Would Tom enjoy a classical music concert?":                {[]string{"cello"}, "Likely yes; he plays cello."},
	"What colour is Tom's bicycle?":                             {[]string{"bicycle"}, "Red."},
	"What was Tom wearing in the photo from the marathon?":      {[]string{"number bib"}, "A number bib."},
}

// scripted plays every model of a -answer run on the fake server:
//   - memory prompts (metadata, summaries, the judge) are answered by the
//     offline rules, over the wire;
//   - the retrieval mini-agent searches interactions once for its request
//     and answers with what the search returned;
//   - the answering model calls retrieve_user_facts once when offered it,
//     then answers a question only when its whole context (memory block,
//     retrieved memories or the conversation) holds what the answer needs.
type scripted struct {
	t   *testing.T
	off *offline.Client

	mu          sync.Mutex
	factQueries []string
}

func newScripted(t *testing.T) *scripted {
	off, err := offline.New(offline.Config{})
	require.NoError(t, err)
	return &scripted{t: t, off: off}
}

func usage(r fakeopenai.Request, answer string) fakeopenai.Reply {
	return fakeopenai.Text(answer).WithUsage(len(r.Text())/4+1, len(answer)/4+1)
}

func (s *scripted) chat(r fakeopenai.Request) fakeopenai.Reply {
	sys := r.SystemText()
	msgs := r.Chat.Messages
	last := msgs[len(msgs)-1]
	switch {
	case strings.HasPrefix(sys, prompts.Marker(prompts.NameFactRetrieval)):
		if last.Role == "tool" {
			var found []string
			for _, m := range msgs {
				if m.Role == "tool" {
					found = append(found, m.Content)
				}
			}
			return usage(r, strings.Join(found, "\n"))
		}
		req := prompts.Blocks(r.LastUserText())[prompts.BlockRequest]
		s.mu.Lock()
		s.factQueries = append(s.factQueries, req)
		s.mu.Unlock()
		return fakeopenai.ToolCalls(fakeopenai.Call("call_search", "search_interactions", map[string]any{"query": req}))
	case strings.HasPrefix(sys, prompts.MarkerPrefix):
		resp, err := s.off.Complete(context.Background(), toAgent(r))
		if err != nil {
			return fakeopenai.Error(400, err.Error())
		}
		return usage(r, resp.Message.Text)
	case strings.Contains(sys, "You answer questions about a long conversation"):
		user := r.LastUserText()
		i := strings.LastIndex(user, "Question: ")
		require.GreaterOrEqual(s.t, i, 0, "no question in %q", user)
		q := user[i+len("Question: "):]
		offered := len(r.Chat.Tools) > 0 && r.Chat.Tools[0].Function.Name == retrieval.ToolName
		if offered && last.Role != "tool" {
			return fakeopenai.ToolCalls(fakeopenai.Call("call_memory", retrieval.ToolName, map[string]any{"query": q}))
		}
		k, ok := known[q]
		context := strings.ReplaceAll(strings.ToLower(r.Text()), strings.ToLower(q), "")
		for _, need := range k.needs {
			ok = ok && slices.ContainsFunc(strings.Split(strings.ToLower(need), "|"), func(alt string) bool { return strings.Contains(context, alt) })
		}
		if !ok {
			return usage(r, "The conversation does not say.")
		}
		return usage(r, k.answer)
	}
	s.t.Errorf("unexpected chat request: %.200q", r.Text())
	return fakeopenai.Error(500, "unexpected request")
}

// toAgent turns a recorded request back into the agent request it was.
func toAgent(r fakeopenai.Request) *agent.ChatRequest {
	req := &agent.ChatRequest{}
	for _, m := range r.Chat.Messages {
		am := agent.Message{Role: agent.Role(m.Role), Text: m.Content, ToolCallID: m.ToolCallID, Name: m.Name}
		for _, c := range m.ToolCalls {
			am.ToolCalls = append(am.ToolCalls, agent.ToolCall{ID: c.ID, Name: c.Name, Arguments: json.RawMessage(c.Arguments)})
		}
		req.Messages = append(req.Messages, am)
	}
	if strings.Contains(string(r.Chat.ResponseFormat), "json") {
		req.ResponseFormat = &agent.ResponseFormat{Type: agent.JSONObject}
	}
	return req
}

// answerServer is a fake server playing every model, with the lexical
// embedder's vectors as its embeddings, and the environment naming it.
func answerServer(t *testing.T) (*fakeopenai.Server, *scripted, func(string) (string, bool)) {
	srv := fakeopenai.New(t)
	s := newScripted(t)
	srv.HandleChat(s.chat)
	e, err := lexical.New(lexical.Config{})
	require.NoError(t, err)
	srv.HandleEmbeddings(fakeopenai.EmbedWith(e))
	env := map[string]string{
		"OPENAI_BASE_URL": srv.URL(), "OPENAI_CHAT_MODEL": "chat", "OPENAI_MINI_MODEL": "mini",
		"OPENAI_EMBEDDING_MODEL": "lexical-served", "OPENAI_EMBEDDING_DIMENSIONS": strconv.Itoa(e.Dimensions()),
	}
	return srv, s, func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// answerJSON runs -answer on testdata and returns its output and report.
func answerJSON(t *testing.T, o options, lookup func(string) (string, bool)) (string, answerReport) {
	t.Helper()
	o.data, o.answer = "testdata", true
	if o.turns == 0 {
		o.turns = 2
	}
	if o.k == 0 {
		o.k = 5
	}
	if o.retrieval == "" {
		o.retrieval = "tool"
	}
	o.jsonPath = filepath.Join(t.TempDir(), "answer.json")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, quiet(), o, lookup))
	b, err := os.ReadFile(o.jsonPath)
	require.NoError(t, err)
	var rep answerReport
	require.NoError(t, json.Unmarshal(b, &rep), string(b))
	return out.String(), rep
}

func TestAnswerEndToEnd(t *testing.T) {
	srv, s, lookup := answerServer(t)
	out, rep := answerJSON(t, options{}, lookup)

	// The fixture's seven questions of categories 1–4 with an answer (the
	// adversarial one is left out; the one without evidence is kept, its
	// answer being "unknown").
	require.Len(t, rep.Results, 7)
	assert.Equal(t, 7, rep.Questions)
	assert.Equal(t, "tool", rep.Retrieval)
	assert.Equal(t, 1, rep.Conversations)
	byQ := map[string]answerResult{}
	for _, r := range rep.Results {
		byQ[r.Question] = r
		require.NotNil(t, r.FullContext)
		assert.Empty(t, r.Memory.Error)
		assert.Positive(t, r.Memory.PromptTokens)
		assert.Positive(t, r.Memory.LatencyMs)
		assert.Positive(t, r.Memory.MemoryTokens, "the mini-agent's tokens are counted: %s", r.Question)
		assert.Equal(t, 1, r.Memory.ToolCalls, "the agent called retrieve_user_facts once")
		assert.Zero(t, r.FullContext.ToolCalls)
		assert.Zero(t, r.FullContext.MemoryTokens)
		assert.Positive(t, r.FullContext.PromptTokens)
	}
	// Memory and the whole conversation both hold the five answerable
	// facts; the bicycle's colour is in neither, and "unknown" is not what
	// "the conversation does not say" reads as to the word-rule judge.
	for q, want := range map[string]bool{
		"Where does Maya's sister live?": true, "When did Tom run the Boston marathon?": true,
		"Which pet did Maya adopt, and what did it learn to fetch?": true, "Would Tom enjoy a classical music concert?": true,
		"What was Tom wearing in the photo from the marathon?": true,
		"What colour is Tom's bicycle?":                        false, "What does Tom think of Maya?": false,
	} {
		r, ok := byQ[q]
		require.True(t, ok, q)
		assert.Equal(t, want, r.Memory.Correct, "memory: %s: %q (%s)", q, r.Memory.Answer, r.Memory.Reasoning)
		assert.Equal(t, want, r.FullContext.Correct, "full context: %s: %q", q, r.FullContext.Answer)
		assert.Contains(t, []string{prompts.LabelCorrect, prompts.LabelWrong}, r.Memory.Label)
	}
	assert.Equal(t, "Lisbon.", byQ["Where does Maya's sister live?"].Memory.Answer)
	assert.InDelta(t, 5.0/7, rep.Memory.J, 0.001)
	assert.InDelta(t, 5.0/7, rep.FullContext.J, 0.001)
	assert.Equal(t, 5, rep.Memory.Correct)
	assert.InDelta(t, 1, rep.ByCategory["1"].Memory, 1e-9)
	assert.Equal(t, 4, rep.ByCategory["4"].Questions)
	assert.Positive(t, rep.JudgeTokens)
	assert.Positive(t, rep.IngestMemoryTokens)
	assert.Positive(t, rep.Memory.LatencyP50ms)
	assert.Positive(t, rep.FullContext.TokensMean)

	// Retrieval ran: each question reached the mini-agent, which searched.
	s.mu.Lock()
	assert.Len(t, s.factQueries, 7)
	s.mu.Unlock()
	// The judge saw every answer, fenced.
	judged := 0
	for _, r := range srv.ChatRequests() {
		if strings.HasPrefix(r.SystemText(), prompts.Marker(prompts.NameAnswerJudge)) {
			judged++
			assert.Contains(t, r.LastUserText(), "<response>")
		}
		// The full-context prompt holds the conversation, dated.
		if strings.Contains(r.LastUserText(), "<conversation>") && strings.Contains(r.SystemText(), "You answer questions") {
			assert.Contains(t, r.LastUserText(), "Session 1, 1:05 pm on 3 March 2023:\nMaya: Guess what")
			assert.Contains(t, r.LastUserText(), "[image: a man running in a crowd wearing a number bib]")
		}
	}
	assert.Equal(t, 14, judged)

	assert.Contains(t, out, "LoCoMo answer quality")
	assert.Contains(t, out, "| all | 7 | 0.714 | 0.714 |")
	assert.Contains(t, out, "| 1 multi-hop | 1 | 1.000 | 1.000 |")
	assert.Contains(t, out, "memory: ")
	assert.Contains(t, out, "full context: ")
}

func TestAnswerQuestionsLeaveNoMemory(t *testing.T) {
	// Asking twice on the same memory file gives the same answers: no
	// question's turn or session became memory.
	_, _, lookup := answerServer(t)
	db := t.TempDir()
	_, first := answerJSON(t, options{db: db, noBaseline: true}, lookup)
	_, second := answerJSON(t, options{db: db, noBaseline: true}, lookup)
	require.Len(t, second.Results, len(first.Results))
	for i := range first.Results {
		assert.Equal(t, first.Results[i].Memory.Answer, second.Results[i].Memory.Answer)
	}
	assert.Nil(t, second.FullContext, "-no-baseline")
	assert.Nil(t, second.Results[0].FullContext)
	assert.Zero(t, second.IngestMemoryTokens, "the second run reuses the ingested memory")

	// The memory holds the two ingested sessions and their eight turns,
	// nothing of the questions.
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(db, "locomo.db"), sqlite.Config{})
	require.NoError(t, err)
	defer st.Close()
	sess, err := st.ListSessions(ctx, "locomo-tiny", store.SessionFilter{})
	require.NoError(t, err)
	require.Len(t, sess, 2)
	turns := 0
	for _, s := range sess {
		ts, err := st.ListTurns(ctx, "locomo-tiny", s.ID, 0)
		require.NoError(t, err)
		turns += len(ts)
	}
	assert.Equal(t, 8, turns)
	var db2 *sql.DB
	require.True(t, st.As(&db2))
	var all int
	require.NoError(t, db2.QueryRow(`SELECT count(*) FROM turns`).Scan(&all))
	assert.Equal(t, 8, all, "no turn record of a question session")
}

func TestAnswerLimitsAndModes(t *testing.T) {
	_, _, lookup := answerServer(t)
	out, rep := answerJSON(t, options{questions: 2, conversations: 1, retrieval: "auto"}, lookup)
	require.Len(t, rep.Results, 2)
	assert.Equal(t, "auto", rep.Retrieval)
	assert.Zero(t, rep.Results[0].Memory.ToolCalls, "auto mode offers no tool")
	assert.Contains(t, out, "retrieval auto")
}

func TestAnswerNeedsAModel(t *testing.T) {
	ctx := context.Background()
	err := run(ctx, &bytes.Buffer{}, quiet(), options{data: "testdata", k: 5, turns: 2, answer: true, retrieval: "tool"}, noEnv)
	require.ErrorIs(t, err, ErrNeedsModel)
	assert.Contains(t, err.Error(), "needs a model")
	_, _, lookup := answerServer(t)
	err = run(ctx, &bytes.Buffer{}, quiet(), options{data: "testdata", k: 5, turns: 2, answer: true, retrieval: "tool", offline: true}, lookup)
	assert.ErrorIs(t, err, ErrNeedsModel, "-offline too")
	for name, o := range map[string]options{
		"retrieval": {retrieval: "sometimes"},
		"questions": {retrieval: "tool", questions: -1},
	} {
		o.data, o.k, o.turns, o.answer = "testdata", 5, 2, true
		assert.Error(t, run(ctx, &bytes.Buffer{}, quiet(), o, lookup), name)
	}
}

func TestAnswerStopsWhenTheModelKeepsFailing(t *testing.T) {
	srv, s, lookup := answerServer(t)
	srv.HandleChat(func(r fakeopenai.Request) fakeopenai.Reply {
		if strings.Contains(r.SystemText(), "You answer questions") {
			return fakeopenai.Error(401, "invalid api key")
		}
		return s.chat(r)
	})
	err := run(context.Background(), &bytes.Buffer{}, quiet(),
		options{data: "testdata", k: 5, turns: 2, answer: true, retrieval: "tool", noBaseline: true}, lookup)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "failed 3 questions in a row")
	assert.False(t, errors.Is(err, ErrNeedsModel))
}
