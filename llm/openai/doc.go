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
// # Servers without JSON mode or tools
//
// Some OpenAI-compatible servers refuse part of a request with an error
// answer: LM Studio refuses response_format json_object, Ollama refuses
// tools for a model whose template has none, llama.cpp server refused
// tools without --jinja, servers with strict validation refuse
// stream_options. A Chat recognises such a refusal by its status (400 or
// 422, or 500 or 501 with a word of refusal) and a message that names the
// field, read from the body whatever its shape ({"error": {"message"}},
// {"error": "…"}, {"message"}, {"detail"}); then:
//
//   - response_format and stream_options: the request is sent once more
//     without the field; when that succeeds the refusal is remembered and
//     later requests leave the field out (a refusal of json_object is kept
//     apart from one of json_schema). A JSON schema left out is given
//     to the model in words at the end of the system message. The answer
//     is then JSON only as far as the model obeys the prompt: parse it
//     leniently (package prompts does).
//   - tools: the call fails with an error wrapping agent.ErrToolsUnsupported
//     (an answer written without the tools is not what was asked for), and
//     later requests offering tools fail so at once, without being sent.
//
// Each refusal is logged once, at warning level, on Config.Logger; Refused
// lists them. Refusals are kept per Chat, for its lifetime.
//
// # Max tokens
//
// ChatRequest.MaxTokens is sent as max_completion_tokens to OpenAI and
// Azure (OpenAI's reasoning models reject max_tokens) and as max_tokens to
// other servers (Ollama, llama.cpp server and older vLLM read only that);
// Config.TokenLimit overrides the choice.
package openai
