package openai_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/llm/openai"
)

// A chat client for an OpenAI-compatible server (here a stand-in for a
// local Ollama at http://localhost:11434/v1) driving an agent.
func ExampleNewChat() {
	ollama := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"1","object":"chat.completion","model":"llama3.2",
			"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Hello!"}}],
			"usage":{"prompt_tokens":12,"completion_tokens":2,"total_tokens":14}}`)
	}))
	defer ollama.Close()

	chat, err := openai.NewChat(openai.Config{BaseURL: ollama.URL + "/v1", ChatModel: "llama3.2"})
	if err != nil {
		log.Fatal(err)
	}
	a := agent.New(chat, agent.Config{Instructions: "You are friendly."})
	resp, err := a.Run(context.Background(), a.NewSession(), agent.UserText("Hi"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Text(), resp.Usage.TotalTokens)
	// Output: Hello! 14
}

// Building clients from the environment, and saying so when there are none.
func ExampleFromEnv() {
	clients, err := openai.FromEnv(os.LookupEnv, openai.Config{})
	switch {
	case errors.Is(err, openai.ErrNotConfigured):
		fmt.Println("no model configured; using the offline client (no LLM)")
		return
	case err != nil:
		log.Fatal(err)
	}
	fmt.Println("using", clients) // e.g. "azure https://x.openai.azure.com chat=gpt4 …"; never the key
	_ = agent.New(clients.Chat, agent.Config{})
}
