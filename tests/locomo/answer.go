package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/stack"
	"github.com/agentmemory/agentmemory/keeper"
	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
)

// answerInstructions is the answer prompt, the same for the agent with
// memory and for the full-context baseline: %s and %s are the speakers.
const answerInstructions = `You answer questions about a long conversation between %s and %s, held over several sessions, each on its own date.
The conversation is available to you either in your memory, which you can search with the tools you are given, or in full in the message that asks the question.
Answer with a short phrase that states what is asked, and nothing else. Give dates as the conversation implies them: resolve "yesterday", "last week" and the like from the date of the session in which they were said. If the conversation does not tell, say so in a few words.`

// retrievalModes are the -retrieval values.
var retrievalModes = map[string]provider.RetrievalMode{
	"tool": provider.RetrievalOnDemand,
	"auto": provider.RetrievalAuto,
	"both": provider.RetrievalBoth,
}

// maxFailuresInARow stops a run whose model keeps failing: a real run costs
// money, and a wrong key fails every call.
const maxFailuresInARow = 3

// ErrNeedsModel reports -answer without a configured model.
var ErrNeedsModel = errors.New("-answer needs a model: set OPENAI_API_KEY, OPENAI_BASE_URL or AZURE_OPENAI_ENDPOINT (see README); the offline client is not an LLM and cannot answer or judge")

// meter is a ChatClient that counts the tokens and calls of the client it
// wraps, so that the memory model's work for one question can be told.
type meter struct {
	agent.ChatClient
	mu    sync.Mutex
	usage agent.Usage
	calls int
}

func (m *meter) Complete(ctx context.Context, req *agent.ChatRequest) (*agent.ChatResponse, error) {
	resp, err := m.ChatClient.Complete(ctx, req)
	m.mu.Lock()
	m.calls++
	if resp != nil {
		m.usage = m.usage.Add(resp.Usage)
	}
	m.mu.Unlock()
	return resp, err
}

// take returns the usage and calls counted since the last take.
func (m *meter) take() (agent.Usage, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	u, n := m.usage, m.calls
	m.usage, m.calls = agent.Usage{}, 0
	return u, n
}

// readOnlyMemory is the provider as the answering agent sees it: its
// context and its retrieval (Invoking), but no turn stored (Invoked does
// nothing), so that a question and its answer never become memory a later
// question could find.
type readOnlyMemory struct{ *provider.MemoryProvider }

func (readOnlyMemory) Invoked(context.Context, *agent.InvokedContext) error { return nil }

// answerRun is one way of answering one question.
type answerRun struct {
	Answer           string  `json:"answer"`
	Label            string  `json:"label"` // CORRECT, WRONG, or "unjudged"
	Correct          bool    `json:"correct"`
	Reasoning        string  `json:"reasoning,omitempty"`
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	MemoryTokens     int     `json:"memory_model_tokens,omitempty"`
	LatencyMs        float64 `json:"latency_ms"`
	ToolCalls        int     `json:"tool_calls,omitempty"`
	Error            string  `json:"error,omitempty"`
}

// answerResult is one question's outcome.
type answerResult struct {
	Conversation string     `json:"conversation"`
	Question     string     `json:"question"`
	Category     int        `json:"category"`
	Gold         string     `json:"gold_answer"`
	Memory       answerRun  `json:"memory"`
	FullContext  *answerRun `json:"full_context,omitempty"`
}

// answerFigures sum up one way of answering.
type answerFigures struct {
	J        float64 `json:"j"`
	Correct  int     `json:"correct"`
	Unjudged int     `json:"unjudged"`
	Errors   int     `json:"errors"`
	// Tokens are per question: the answering model's prompt and
	// completion, the memory model's work (retrieval), and all together.
	PromptTokensMean     float64 `json:"prompt_tokens_mean"`
	CompletionTokensMean float64 `json:"completion_tokens_mean"`
	MemoryTokensMean     float64 `json:"memory_model_tokens_mean"`
	TokensMean           float64 `json:"tokens_mean"`
	LatencyP50ms         float64 `json:"latency_p50_ms"`
	LatencyP95ms         float64 `json:"latency_p95_ms"`
	ToolCallsMean        float64 `json:"tool_calls_mean"`
}

// answerCategory is J per LoCoMo category.
type answerCategory struct {
	Name        string   `json:"name"`
	Questions   int      `json:"questions"`
	Memory      float64  `json:"memory_j"`
	FullContext *float64 `json:"full_context_j,omitempty"`

	memCorrect, fullCorrect int
}

// answerReport is what -answer prints and writes with -json.
type answerReport struct {
	Model         string                     `json:"model"`
	Turns         int                        `json:"turns"`
	Retrieval     string                     `json:"retrieval"`
	Conversations int                        `json:"conversations"`
	Questions     int                        `json:"questions"`
	Memory        answerFigures              `json:"memory"`
	FullContext   *answerFigures             `json:"full_context,omitempty"`
	ByCategory    map[string]*answerCategory `json:"by_category"`
	// JudgeTokens are the judge's tokens in all; IngestMemoryTokens the
	// memory model's while the conversations were ingested.
	JudgeTokens        int            `json:"judge_tokens"`
	IngestMemoryTokens int            `json:"ingest_memory_model_tokens"`
	Results            []answerResult `json:"results"`
}

// answerer answers and judges questions.
type answerer struct {
	chat     agent.ChatClient
	mini     *meter
	st       store.Store
	nonce    string
	judgeTok int
}

// runAnswers answers every question of convs that -answer scores (see
// questionsOf) with the agent and its memory (mem, already ingested), and
// with the whole conversation in the prompt unless o.noBaseline, and has
// each answer judged by the chat model.
func runAnswers(ctx context.Context, logger *slog.Logger, o options, m *stack.Models, mem *memory, mini *meter, convs []*conversation) (*answerReport, error) {
	prov, err := provider.New(mem.st, provider.Config{Chat: m.Chat, Mini: mini, Embedder: m.Embedder, KeeperConfig: keeper.Config{K: o.turns},
		Retrieval: retrievalModes[o.retrieval], Reflection: provider.ReflectManual, Logger: logger, Now: mem.clock.now})
	if err != nil {
		return nil, err
	}
	defer prov.Close(context.WithoutCancel(ctx))
	an := &answerer{chat: m.Chat, mini: mini, st: mem.st, nonce: newNonce()}
	rep := &answerReport{Model: m.Description, Turns: o.turns, Retrieval: o.retrieval, Conversations: len(convs), ByCategory: map[string]*answerCategory{}}
	for c, name := range categoryNames {
		rep.ByCategory[strconv.Itoa(c)] = &answerCategory{Name: name}
	}
	failures := 0
	for _, c := range convs {
		user := userOf(c)
		instr := fmt.Sprintf(answerInstructions, c.speakerA, c.speakerB)
		mem.clock.set(lastDate(c).Add(time.Hour)) // questions come after the last session
		memAgent := agent.New(m.Chat, agent.Config{Name: "locomo-memory", Instructions: instr,
			ContextProviders: []agent.ContextProvider{readOnlyMemory{prov}}, Logger: logger, Now: mem.clock.now})
		fullAgent := agent.New(m.Chat, agent.Config{Name: "locomo-full-context", Instructions: instr, Logger: logger, Now: mem.clock.now})
		whole := prompts.Fence(prompts.BlockConversation, transcript(c))
		for i, q := range questionsOf(c, o.questions) {
			res := answerResult{Conversation: c.name, Question: q.Question, Category: q.Category, Gold: q.answerText()}
			id := fmt.Sprintf("locomo-%s-q%d-%s", c.name, i+1, an.nonce)
			res.Memory = an.answerWith(ctx, memAgent, user, id, "Question: "+q.Question)
			// The question's session holds no turn (readOnlyMemory); its
			// document goes too, so the memory stays as ingested.
			if err := mem.st.DeleteDocument(ctx, user, store.KindSessionSummary, id); err != nil && !errors.Is(err, store.ErrNotFound) {
				logger.Warn("locomo: delete the question's session", "session", id, "err", err)
			}
			an.judge(ctx, q.Question, res.Gold, &res.Memory)
			if !o.noBaseline {
				fc := an.answerWith(ctx, fullAgent, user, id+"-full", whole+"\n\nQuestion: "+q.Question)
				fc.MemoryTokens = 0 // no memory involved
				an.judge(ctx, q.Question, res.Gold, &fc)
				res.FullContext = &fc
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if res.Memory.Error != "" {
				failures++
				if failures == maxFailuresInARow {
					return nil, fmt.Errorf("the model failed %d questions in a row; last: %s", failures, res.Memory.Error)
				}
			} else {
				failures = 0
			}
			logger.Info("locomo: answered", "conversation", c.name, "question", q.Question, "memory", res.Memory.Label, "answer", res.Memory.Answer)
			rep.Results = append(rep.Results, res)
			cat := rep.ByCategory[strconv.Itoa(q.Category)]
			cat.Questions++
			if res.Memory.Correct {
				cat.memCorrect++
			}
			if res.FullContext != nil && res.FullContext.Correct {
				cat.fullCorrect++
			}
		}
	}
	rep.Questions = len(rep.Results)
	var memRuns, fullRuns []answerRun
	for _, r := range rep.Results {
		memRuns = append(memRuns, r.Memory)
		if r.FullContext != nil {
			fullRuns = append(fullRuns, *r.FullContext)
		}
	}
	rep.Memory = answerFiguresOf(memRuns)
	if !o.noBaseline {
		f := answerFiguresOf(fullRuns)
		rep.FullContext = &f
	}
	for _, cat := range rep.ByCategory {
		cat.Memory = round(ratio(cat.memCorrect, cat.Questions), 3)
		if !o.noBaseline {
			v := round(ratio(cat.fullCorrect, cat.Questions), 3)
			cat.FullContext = &v
		}
	}
	rep.JudgeTokens = an.judgeTok
	return rep, nil
}

// questionsOf returns the questions of c that -answer scores: categories
// 1–4 with a reference answer, at most limit (0: all).
func questionsOf(c *conversation, limit int) []question {
	var out []question
	for _, q := range c.qa {
		if categoryNames[q.Category] == "" || q.answerText() == "" || strings.TrimSpace(q.Question) == "" {
			continue
		}
		if limit > 0 && len(out) == limit {
			break
		}
		out = append(out, q)
	}
	return out
}

// transcript is the whole conversation as the full-context baseline
// gives it: each session headed by its number and date, then one
// "speaker: text" line per message.
func transcript(c *conversation) string {
	var b strings.Builder
	for _, s := range c.sessions {
		if len(s.turns) == 0 {
			continue
		}
		fmt.Fprintf(&b, "Session %d, %s:\n", s.n, s.time.Format("3:04 pm on 2 January 2006"))
		for _, t := range s.turns {
			if text := messageText(t); text != "" {
				fmt.Fprintf(&b, "%s: %s\n", t.Speaker, strings.ReplaceAll(text, "\n", " "))
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// lastDate is the date of the conversation's last session.
func lastDate(c *conversation) time.Time {
	var t time.Time
	for _, s := range c.sessions {
		if s.time.After(t) {
			t = s.time
		}
	}
	return t
}

// answerWith runs agent a on a new session of user with input and
// measures it.
func (an *answerer) answerWith(ctx context.Context, a *agent.Agent, user, id, input string) answerRun {
	sess, err := agent.NewSession(id, user)
	if err != nil {
		return answerRun{Error: err.Error()}
	}
	an.mini.take()
	start := time.Now()
	resp, err := a.Run(ctx, sess, agent.UserText(input))
	r := answerRun{LatencyMs: ms(time.Since(start))}
	mem, _ := an.mini.take()
	r.MemoryTokens = mem.TotalTokens
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.Answer = strings.TrimSpace(resp.Text())
	r.PromptTokens, r.CompletionTokens = resp.Usage.PromptTokens, resp.Usage.CompletionTokens
	for _, msg := range resp.Messages {
		r.ToolCalls += len(msg.ToolCalls)
	}
	return r
}

// judge grades r's answer to q against gold with the answer_judge prompt.
func (an *answerer) judge(ctx context.Context, q, gold string, r *answerRun) {
	r.Label = prompts.LabelWrong
	if r.Error != "" || r.Answer == "" {
		r.Reasoning = "no answer"
		return
	}
	p, err := prompts.AnswerJudge(q, gold, r.Answer)
	if err != nil {
		r.Label, r.Reasoning = "unjudged", err.Error()
		return
	}
	resp, err := an.chat.Complete(ctx, p.Request())
	if err != nil {
		r.Label, r.Reasoning = "unjudged", "judge failed: "+err.Error()
		return
	}
	an.judgeTok += resp.Usage.TotalTokens
	j, err := prompts.ParseJudgement([]byte(resp.Message.Text))
	if err != nil {
		r.Label, r.Reasoning = "unjudged", err.Error()
		return
	}
	r.Label, r.Correct, r.Reasoning = j.Label, j.Correct, j.Reasoning
}

// figures sums up runs.
func answerFiguresOf(runs []answerRun) answerFigures {
	var f answerFigures
	if len(runs) == 0 {
		return f
	}
	var lat []float64
	var prompt, completion, mem, tools int
	for _, r := range runs {
		switch {
		case r.Correct:
			f.Correct++
		case r.Label == "unjudged":
			f.Unjudged++
		}
		if r.Error != "" {
			f.Errors++
		}
		prompt += r.PromptTokens
		completion += r.CompletionTokens
		mem += r.MemoryTokens
		tools += r.ToolCalls
		lat = append(lat, r.LatencyMs)
	}
	n := len(runs)
	f.J = round(ratio(f.Correct, n), 3)
	f.PromptTokensMean = round(ratio(prompt, n), 1)
	f.CompletionTokensMean = round(ratio(completion, n), 1)
	f.MemoryTokensMean = round(ratio(mem, n), 1)
	f.TokensMean = round(ratio(prompt+completion+mem, n), 1)
	f.ToolCallsMean = round(ratio(tools, n), 2)
	slices.Sort(lat)
	f.LatencyP50ms = percentile(lat, 50)
	f.LatencyP95ms = percentile(lat, 95)
	return f
}

func newNonce() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (r *answerReport) writeMarkdown(w io.Writer) {
	full := r.FullContext != nil
	if full {
		fmt.Fprintln(w, "| questions | n | memory J | full-context J |\n|---|---|---|---|")
	} else {
		fmt.Fprintln(w, "| questions | n | memory J |\n|---|---|---|")
	}
	row := func(label string, n int, mem float64, fc *float64) {
		fmt.Fprintf(w, "| %s | %d | %.3f |", label, n, mem)
		if full {
			if fc != nil {
				fmt.Fprintf(w, " %.3f |", *fc)
			} else {
				fmt.Fprint(w, " – |")
			}
		}
		fmt.Fprintln(w)
	}
	var fj *float64
	if full {
		fj = &r.FullContext.J
	}
	row("all", r.Questions, r.Memory.J, fj)
	for c := 1; c <= 4; c++ {
		if cat := r.ByCategory[strconv.Itoa(c)]; cat != nil && cat.Questions > 0 {
			row(fmt.Sprintf("%d %s", c, cat.Name), cat.Questions, cat.Memory, cat.FullContext)
		}
	}
	line := func(name string, f answerFigures) {
		fmt.Fprintf(w, "%s: %.0f tokens per question (answering model %.0f prompt + %.0f completion, memory model %.0f), latency p50 %.0f ms, p95 %.0f ms, %.2f tool calls; %d unjudged, %d errors\n",
			name, f.TokensMean, f.PromptTokensMean, f.CompletionTokensMean, f.MemoryTokensMean, f.LatencyP50ms, f.LatencyP95ms, f.ToolCallsMean, f.Unjudged, f.Errors)
	}
	fmt.Fprintln(w)
	line("memory", r.Memory)
	if full {
		line("full context", *r.FullContext)
	}
	fmt.Fprintf(w, "judge: %d tokens in all; ingest: %d memory-model tokens\n", r.JudgeTokens, r.IngestMemoryTokens)
}
