package langchain_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/llm/langchain"
)

// An agent and an embedder on langchaingo's OpenAI client, here talking to
// a stand-in for an OpenAI-compatible server.
func Example() {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/chat/completions":
			_, _ = io.WriteString(w, `{"id":"1","object":"chat.completion","model":"llama3.2",
				"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Hello!"}}],
				"usage":{"prompt_tokens":12,"completion_tokens":2,"total_tokens":14}}`)
		case "/v1/embeddings":
			_, _ = io.WriteString(w, `{"object":"list","model":"nomic-embed-text",
				"data":[{"object":"embedding","index":0,"embedding":[0.6,0.8,0]}]}`)
		}
	}))
	defer server.Close()

	llm, err := openai.New(
		openai.WithBaseURL(server.URL+"/v1"),
		openai.WithToken("unused"), // langchaingo requires one, even for local servers
		openai.WithModel("llama3.2"),
		openai.WithEmbeddingModel("nomic-embed-text"),
	)
	if err != nil {
		log.Fatal(err)
	}

	chat, err := langchain.NewChatClient(llm, langchain.ChatConfig{})
	if err != nil {
		log.Fatal(err)
	}
	a := agent.New(chat, agent.Config{Instructions: "You are friendly."})
	resp, err := a.Run(context.Background(), a.NewSession(), agent.UserText("Hi"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Text(), resp.Usage.TotalTokens)

	lce, err := embeddings.NewEmbedder(llm)
	if err != nil {
		log.Fatal(err)
	}
	emb, err := langchain.NewEmbedder(lce, langchain.EmbedderConfig{Model: "nomic-embed-text", Dimensions: 3})
	if err != nil {
		log.Fatal(err)
	}
	vs, err := emb.Embed(context.Background(), []string{"Hi"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(emb.Model(), vs[0])
	// Output:
	// Hello! 14
	// nomic-embed-text [0.6 0.8 0]
}
