package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/agentmemory/agentmemory/llm/openai"
)

// Upstream is the model endpoint the gateway forwards to. It is spoken to
// with a plain HTTP client, not an SDK, so that every field a client sends
// and every field the endpoint answers survives.
type Upstream struct {
	// BaseURL is an OpenAI-style base URL with its /v1:
	// "https://api.openai.com/v1", "http://localhost:11434/v1" (Ollama).
	// Chat requests go to BaseURL + "/chat/completions".
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>"; empty sends none.
	// The client's own credentials (the gateway's keys) are never
	// forwarded.
	APIKey string
	// Azure selects Azure OpenAI when its Endpoint is set: a request's
	// model names the deployment it goes to.
	Azure AzureUpstream
	// Model is put in a request that names none (Azure: the deployment).
	Model string
	// HTTPClient sends the requests; nil means http.DefaultClient. Its
	// Timeout, if any, bounds streams too.
	HTTPClient *http.Client
}

// AzureUpstream is an Azure OpenAI endpoint.
type AzureUpstream struct {
	// Endpoint is the resource, "https://my-resource.openai.azure.com".
	Endpoint string
	// APIVersion is the api-version query parameter; empty means
	// openai.DefaultAzureAPIVersion.
	APIVersion string
	// APIKey is sent as the api-key header; without it, Credential's
	// Entra ID tokens are sent as "Authorization: Bearer".
	APIKey     string
	Credential azcore.TokenCredential
	// Scopes are the token scopes; empty means openai.DefaultAzureScope.
	Scopes []string
}

// UpstreamFrom returns the Upstream of an llm/openai configuration (the
// one openai.FromEnv reads from the environment): its endpoint, its
// credentials, its chat model as the default model and its HTTP client.
func UpstreamFrom(c openai.Config) Upstream {
	u := Upstream{Model: c.ChatModel, HTTPClient: c.HTTPClient}
	switch c.Service() {
	case openai.ServiceAzure:
		u.Azure = AzureUpstream{Endpoint: c.Azure.Endpoint, APIVersion: c.Azure.APIVersion, APIKey: c.Azure.APIKey,
			Credential: c.Azure.Credential, Scopes: c.Azure.Scopes}
	default:
		u.BaseURL, u.APIKey = c.Endpoint(), c.APIKey
	}
	return u
}

// check reports what is missing or malformed.
func (u Upstream) check() error {
	raw := u.BaseURL
	field := "Upstream.BaseURL"
	if u.Azure.Endpoint != "" {
		if u.BaseURL != "" {
			return errors.New("gateway: both Upstream.BaseURL and Upstream.Azure.Endpoint are set; set one")
		}
		if u.Azure.APIKey == "" && u.Azure.Credential == nil {
			return errors.New("gateway: Upstream.Azure needs APIKey or Credential")
		}
		raw, field = u.Azure.Endpoint, "Upstream.Azure.Endpoint"
	}
	if raw == "" {
		return errors.New("gateway: Upstream.BaseURL or Upstream.Azure.Endpoint is required")
	}
	p, err := url.Parse(raw)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return fmt.Errorf("gateway: %s %q: want an absolute http or https URL", field, raw)
	}
	return nil
}

// endpoint is the URL of operation op ("chat/completions", "models") for
// model (the Azure deployment).
func (u Upstream) endpoint(op, model string) string {
	if u.Azure.Endpoint == "" {
		return strings.TrimSuffix(u.BaseURL, "/") + "/" + op
	}
	v := u.Azure.APIVersion
	if v == "" {
		v = openai.DefaultAzureAPIVersion
	}
	base := strings.TrimSuffix(u.Azure.Endpoint, "/") + "/openai/"
	q := "?api-version=" + url.QueryEscape(v)
	if op == "models" {
		return base + "models" + q
	}
	return base + "deployments/" + url.PathEscape(model) + "/" + op + q
}

// authorize sets the upstream's credentials on req.
func (u Upstream) authorize(ctx context.Context, req *http.Request) error {
	switch {
	case u.Azure.Endpoint == "":
		if u.APIKey != "" {
			req.Header.Set("Authorization", "Bearer "+u.APIKey)
		}
	case u.Azure.APIKey != "":
		req.Header.Set("api-key", u.Azure.APIKey)
	default:
		scopes := u.Azure.Scopes
		if len(scopes) == 0 {
			scopes = []string{openai.DefaultAzureScope}
		}
		tok, err := u.Azure.Credential.GetToken(ctx, policy.TokenRequestOptions{Scopes: scopes})
		if err != nil {
			return fmt.Errorf("azure token: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+tok.Token)
	}
	return nil
}

func (u Upstream) client() *http.Client {
	if u.HTTPClient != nil {
		return u.HTTPClient
	}
	return http.DefaultClient
}

// do sends a request to operation op. A connection failure is an error;
// any answer, error statuses included, is returned for the caller to
// relay.
func (u Upstream) do(ctx context.Context, method, op, model string, body []byte) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.endpoint(op, model), rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if err := u.authorize(ctx, req); err != nil {
		return nil, err
	}
	return u.client().Do(req)
}

// maxErrorBody bounds the error body of an upstream that is relayed.
const maxErrorBody = 1 << 20

// relayError answers an upstream's error answer with its status: its body
// as it is when it is in OpenAI's error shape, else wrapped in it.
func relayError(w http.ResponseWriter, resp *http.Response) {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var shape struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &shape) == nil && len(shape.Error) > 0 && shape.Error[0] == '{' {
		w.Header().Set("Content-Type", "application/json")
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			w.Header().Set("Retry-After", ra)
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(body)
		return
	}
	msg := strings.TrimSpace(string(body))
	if len(msg) > 512 {
		msg = msg[:512] + "…"
	}
	writeError(w, upstreamFailed(resp.StatusCode, "upstream answered %s: %s", resp.Status, msg))
}
