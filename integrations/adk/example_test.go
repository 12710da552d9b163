package adk_test

import (
	"context"
	"fmt"
	"iter"
	"log"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/integrations/adk"
	"github.com/agentmemory/agentmemory/llm/offline"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// An ADK agent with agentmemory: the Memory is the runner's memory service
// and its plugin gives every invocation the user's memory. The second
// session's first model request holds the first session's summary.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "agentmemory-adk")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(ctx, filepath.Join(dir, "memory.db"), sqlite.Config{Dimensions: 384})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	mini, _ := offline.New(offline.Config{}) // memory's own model; llm/openai for a real one
	emb, _ := lexical.New(lexical.Config{Dimensions: 384})

	mem, err := adk.New(st, adk.Config{Provider: provider.Config{Chat: mini, Embedder: emb}})
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Close(ctx)
	memPlugin, _ := mem.Plugin()
	chat := &quietModel{} // the agent's model: gemini.NewModel(…) in a real agent
	advisor, _ := llmagent.New(llmagent.Config{Name: "advisor", Model: chat, Instruction: "You are a financial advisor."})
	sessions := session.InMemoryService()
	r, err := runner.New(runner.Config{
		AppName: "advisor", Agent: advisor, SessionService: sessions, MemoryService: mem,
		PluginConfig: runner.PluginConfig{Plugins: []*plugin.Plugin{memPlugin}},
	})
	if err != nil {
		log.Fatal(err)
	}

	ask := func(s session.Session, text string) {
		for _, err := range r.Run(ctx, s.UserID(), s.ID(), genai.NewContentFromText(text, genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				log.Fatal(err)
			}
		}
	}
	first, _ := sessions.Create(ctx, &session.CreateRequest{AppName: "advisor", UserID: "client-42"})
	ask(first.Session, "My old 401k from Acme holds $40,000.")
	done, _ := sessions.Get(ctx, &session.GetRequest{AppName: "advisor", UserID: "client-42", SessionID: first.Session.ID()})
	ended, err := mem.EndSession(ctx, done.Session) // summary written, reflection queued
	if err != nil {
		log.Fatal(err)
	}

	second, _ := sessions.Create(ctx, &session.CreateRequest{AppName: "advisor", UserID: "client-42"})
	ask(second.Session, "What should I do with it?")
	fmt.Println("first session:", ended.Session.Status)
	fmt.Println("second session's request holds its summary:", strings.Contains(chat.system, ended.Session.Summary))
	// Output:
	// first session: completed
	// second session's request holds its summary: true
}

// quietModel stands in for a chat model: it keeps the last system
// instruction it was sent and answers "Noted.".
type quietModel struct{ system string }

func (m *quietModel) Name() string { return "quiet" }

func (m *quietModel) GenerateContent(ctx context.Context, req *model.LLMRequest, stream bool) iter.Seq2[*model.LLMResponse, error] {
	m.system = ""
	if req.Config != nil && req.Config.SystemInstruction != nil {
		for _, p := range req.Config.SystemInstruction.Parts {
			m.system += p.Text + "\n"
		}
	}
	return func(yield func(*model.LLMResponse, error) bool) {
		yield(&model.LLMResponse{Content: genai.NewContentFromText("Noted.", genai.RoleModel)}, nil)
	}
}
