// Package openai implements agent.ChatClient (Chat) and embed.Embedder
// (Embedder) on github.com/openai/openai-go/v3, for OpenAI, Azure OpenAI
// (API key or Entra ID) and any OpenAI-compatible server: Ollama, vLLM,
// llama.cpp server, Hugging Face TEI, proxies.
//
//	chat, err := openai.NewChat(openai.Config{APIKey: key, ChatModel: "gpt-4.1"})
//	emb, err := openai.NewEmbedder(openai.Config{
//		Azure:          openai.AzureConfig{Endpoint: "https://my-resource.openai.azure.com"}, // Entra ID
//		EmbeddingModel: "text-embedding-3-small",                                          // the deployment
//	})
//	local, err := openai.NewChat(openai.Config{BaseURL: "http://localhost:11434/v1", ChatModel: "llama3.2"})
//
// Chat uses the Chat Completions API: tools become function tools, JSON mode
// and structured output map to response_format json_object and
// json_schema, and usage, finish reason and model come back in the
// agent.ChatResponse. Chat also streams (agent.ChatStreamer, see
// Chat.CompleteStream). Retries on 408, 409, 429 and 5xx answers and on
// connection errors are the SDK's own (exponential backoff, honouring
// Retry-After), Config.MaxRetries times. ctx cancellation stops a request
// and any retry wait; the error then satisfies errors.Is(err,
// context.Canceled) (or context.DeadlineExceeded).
//
// Tool-call arguments from the model are untrusted: they are normalised to
// valid JSON (see Chat.Complete) and validated by the tool, never here.
//
// # Environment
//
// FromEnv builds a chat client, a "mini" chat client for background work
// and an embedder from these variables (empty counts as unset). When
// AZURE_OPENAI_ENDPOINT is set, Azure OpenAI is used and the OPENAI_ model
// variables are ignored; otherwise OPENAI_API_KEY or OPENAI_BASE_URL selects
// OpenAI or a compatible server. When none of the variables is set, FromEnv
// returns ErrNotConfigured.
//
//	Variable                           Used for                                    Default
//	OPENAI_API_KEY                     OpenAI key (optional with OPENAI_BASE_URL)  —
//	OPENAI_BASE_URL                    OpenAI-compatible server, incl. /v1         https://api.openai.com/v1
//	OPENAI_CHAT_MODEL                  chat model                                  gpt-4.1 (required with OPENAI_BASE_URL)
//	OPENAI_MINI_MODEL                  mini chat model                             gpt-4.1-mini; with OPENAI_BASE_URL the chat model
//	OPENAI_EMBEDDING_MODEL             embedding model                             text-embedding-3-small (required with OPENAI_BASE_URL)
//	OPENAI_EMBEDDING_DIMENSIONS        vector length, sent as "dimensions"         the model's native length (known for OpenAI models only);
//	                                   (also used with Azure)                      required for other models
//	AZURE_OPENAI_ENDPOINT              Azure resource endpoint; selects Azure      —
//	AZURE_OPENAI_API_KEY               Azure key (api-key header)                  Entra ID via DefaultAzureCredential
//	AZURE_OPENAI_API_VERSION           api-version query parameter                 2024-10-21
//	AZURE_OPENAI_CHAT_DEPLOYMENT       chat deployment                             required with Azure
//	AZURE_OPENAI_CHAT_MINI_DEPLOYMENT  mini chat deployment                        the chat deployment
//	AZURE_OPENAI_EMBEDDING_DEPLOYMENT  embedding deployment                        required with Azure
//
// Nothing else in this package reads the environment; the SDK's own
// OPENAI_* defaults are bypassed. DefaultAzureCredential reads its own
// AZURE_CLIENT_ID, AZURE_TENANT_ID… as documented by azidentity.
//
// # Max tokens
//
// ChatRequest.MaxTokens is sent as max_completion_tokens to OpenAI and
// Azure (OpenAI's reasoning models reject max_tokens) and as max_tokens to
// other servers (Ollama, llama.cpp server and older vLLM read only that);
// Config.TokenLimit overrides the choice.
package openai
