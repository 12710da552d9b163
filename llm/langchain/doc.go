// Package langchain implements agent.ChatClient (ChatClient) and
// embed.Embedder (Embedder) on github.com/tmc/langchaingo, so agentmemory
// runs on any langchaingo llms.Model (OpenAI, Anthropic, Google AI, Ollama,
// Bedrock, Mistral…) and any embeddings.Embedder.
//
//	llm, err := openai.New(openai.WithModel("gpt-4.1"))            // langchaingo's llms/openai
//	chat, err := langchain.NewChatClient(llm, langchain.ChatConfig{})
//	mini, err := langchain.NewChatClient(llm, langchain.ChatConfig{Model: "gpt-4.1-mini"})
//	ec, err := openai.New(openai.WithEmbeddingModel("text-embedding-3-small"))
//	lce, err := embeddings.NewEmbedder(ec)
//	emb, err := langchain.NewEmbedder(lce, langchain.EmbedderConfig{Model: "text-embedding-3-small", Dimensions: 1536})
//	mem, err := provider.New(st, provider.Config{Chat: chat, Mini: mini, Embedder: emb})
//
// ChatClient sends one GenerateContent call per request: messages become
// llms.MessageContent, tools llms.WithTools, JSON mode llms.WithJSONMode,
// and Temperature and MaxTokens llms.WithTemperature and llms.WithMaxTokens.
// Tool calls go both ways, tool results as llms.ToolCallResponse. What
// langchaingo cannot carry fails with ErrUnsupported (a json_schema
// response format, legacy function-call answers) or ErrEmptyAnswer (an
// answer with no text and no tool calls, which is how a refusal arrives),
// never silently; only the optional Message.Name of system, user and
// assistant messages is left out (see ChatClient.Complete).
//
// Retries, timeouts and authentication are the langchaingo client's
// business: this package adds none. ctx cancellation reaches the client;
// the returned error then satisfies errors.Is(err, context.Canceled) (or
// context.DeadlineExceeded) even where langchaingo's own error does not.
//
// # What the backend does with the options
//
// The adapter sets only what the request asks for, but a backend may send
// more. With langchaingo's llms/openai (v0.1.14):
//
//   - "temperature" is always sent: 0 when the request has no Temperature,
//     rather than the model's default (it is left out only for model names
//     starting o1-, o3 or gpt-5).
//   - MaxTokens is sent as max_completion_tokens; add
//     openai.WithLegacyMaxTokensField() to ChatConfig.Options for servers
//     that read only max_tokens (Ollama, llama.cpp server, older vLLM).
//   - For the models o1 and o3 (and their -mini and -preview), system
//     messages are merged into the first user message.
//   - The client does not retry (llm/openai does), and an error is plain
//     text: "API returned unexpected status code: 500: <server message>".
//   - The embeddings answer's index field is ignored: vectors are taken in
//     the order the server lists them.
//   - openai.New reads OPENAI_API_KEY, OPENAI_MODEL, OPENAI_BASE_URL,
//     OPENAI_API_BASE and OPENAI_ORGANIZATION for options not given, and
//     fails without a key even for servers that need none. This package
//     reads no environment.
//
// And embeddings.NewEmbedder strips newlines from every text by default
// (embeddings.WithStripNewLines(false) keeps them) and batches 512 texts a
// request.
package langchain
