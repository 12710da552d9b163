package cosmos

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/stretchr/testify/require"
)

// fakeKey is an account key the fake accepts (it checks nothing): any
// base64 string does for the SDK's request signing.
const fakeKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

// recorded is one request the fake received.
type recorded struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// queryBody is the JSON body of a query request.
type queryBody struct {
	Query      string `json:"query"`
	Parameters []struct {
		Name  string `json:"name"`
		Value any    `json:"value"`
	} `json:"parameters"`
}

func (r recorded) isQuery() bool {
	return strings.HasPrefix(r.Header.Get("Content-Type"), "application/query+json")
}

func (r recorded) query(t *testing.T) queryBody {
	t.Helper()
	var q queryBody
	require.NoError(t, json.Unmarshal(r.Body, &q), "query body %s", r.Body)
	return q
}

// fake is a scripted Cosmos DB endpoint over httptest: it answers the
// SDK's account read itself and hands every other request to handle
// (nil: 200 with an empty query page or an empty document), recording
// them all.
type fake struct {
	srv    *httptest.Server
	mu     sync.Mutex
	reqs   []recorded
	handle func(w http.ResponseWriter, r recorded) bool
}

func newFake(t *testing.T, handle func(w http.ResponseWriter, r recorded) bool) *fake {
	t.Helper()
	f := &fake{handle: handle}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if req.Method == http.MethodGet && req.URL.Path == "/" {
			w.Header().Set("Content-Type", "application/json")
			loc := []map[string]string{{"name": "local", "databaseAccountEndpoint": f.srv.URL + "/"}}
			_ = json.NewEncoder(w).Encode(map[string]any{
				"writableLocations": loc, "readableLocations": loc,
				"userConsistencyPolicy": map[string]string{"defaultConsistencyLevel": "Session"},
			})
			return
		}
		rec := recorded{Method: req.Method, Path: req.URL.Path, Header: req.Header.Clone(), Body: body}
		f.mu.Lock()
		f.reqs = append(f.reqs, rec)
		handle := f.handle
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("x-ms-request-charge", "1.5")
		if handle != nil && handle(w, rec) {
			return
		}
		if rec.isQuery() {
			_, _ = io.WriteString(w, `{"Documents":[],"_count":0}`)
			return
		}
		w.Header().Set("etag", `"fake-etag"`)
		if req.Method == http.MethodPost || req.Method == http.MethodPut {
			w.WriteHeader(http.StatusCreated)
		}
		_, _ = io.WriteString(w, `{}`)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

func (f *fake) reset() {
	f.mu.Lock()
	f.reqs = nil
	f.mu.Unlock()
}

// open opens a Store on the fake with fast retries.
func (f *fake) open(t *testing.T, mod func(*Config)) *Store {
	t.Helper()
	cfg := Config{
		Endpoint:   f.srv.URL,
		Key:        fakeKey,
		Dimensions: 3,
		ClientOptions: &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{
			Retry: policy.RetryOptions{MaxRetries: 3, RetryDelay: time.Millisecond, MaxRetryDelay: time.Second},
		}},
	}
	if mod != nil {
		mod(&cfg)
	}
	s, err := Open(t.Context(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// writeError answers with a Cosmos-style error body.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"code": code, "message": msg})
}

func isTextQuery(r recorded) bool {
	return r.isQuery() && (strings.Contains(string(r.Body), "FullTextContainsAny") || strings.Contains(string(r.Body), "search_terms"))
}

type (
	azcosmosClient   = azcosmos.Client
	azcosmosDatabase = azcosmos.DatabaseClient
)
