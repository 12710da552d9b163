package doctest

import (
	"bufio"
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentmemory/agentmemory/internal/fakeopenai"
)

// serverKey is the API key the snippets' server accepts, as AGENTMEMORY_KEY.
const serverKey = "doctest-key-0123456789"

// goBuild builds the main package pkg of module into the executable bin,
// without the symbol table and debug information: linking is most of
// TestSnippetsRun's time, and it takes a quarter less CPU so (a panic's
// stack trace keeps its function names).
func goBuild(ctx context.Context, goTool, module, pkg, bin string) error {
	cmd := exec.CommandContext(ctx, goTool, "build", "-ldflags=-s -w", "-o", bin, pkg)
	cmd.Dir = module
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
	}
	return nil
}

// docServer is a running agentmemory-server as the snippets reach it:
// over HTTPS, through a proxy that records every exchange.
type docServer struct {
	url    string // the proxy's https origin: AGENTMEMORY_URL
	caFile string // PEM of the proxy's certificate
	rec    *recorder
	logs   *syncBuffer // the server's log
}

// env is what a snippet runs with: the address and key the docs name, and
// the proxy's certificate where curl, Node.js and Go look for extra roots.
func (s *docServer) env() []string {
	return append(os.Environ(),
		"AGENTMEMORY_URL="+s.url,
		"AGENTMEMORY_KEY="+serverKey,
		"CURL_CA_BUNDLE="+s.caFile,
		"NODE_EXTRA_CA_CERTS="+s.caFile,
		"SSL_CERT_FILE="+s.caFile,
	)
}

var servingAddr = regexp.MustCompile(`msg="agentmemory-server: serving the Memory Store API" addr=(\S+)`)

// startServer runs bin with a key, the offline models, a SQLite file in a
// temporary directory and the gateway in front of upstream, behind a TLS
// proxy; it is stopped with SIGTERM, and must drain cleanly, when the test
// ends.
func startServer(t *testing.T, bin string, upstream *fakeopenai.Server) *docServer {
	t.Helper()
	dir := t.TempDir()
	logs := &syncBuffer{}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-db", filepath.Join(dir, "memory.db"), "-offline",
		"-trust-forwarded", "-gateway-upstream", upstream.URL())
	// Not the test's environment: a model or Cosmos DB configured there
	// must not reach the server.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "AGENTMEMORY_SERVER_KEYS=" + serverKey, "OPENAI_API_KEY=upstream-key"}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting agentmemory-server: %v", err)
	}
	addr := make(chan string, 1)
	exited := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logs.add(sc.Text() + "\n")
			if m := servingAddr.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		exited <- cmd.Wait() // after the pipe's last read, as Wait requires
	}()
	var backend string
	select {
	case backend = <-addr:
	case err := <-exited:
		t.Fatalf("agentmemory-server stopped before serving: %v\n%s", err, logs)
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("agentmemory-server did not say where it serves within a minute:\n%s", logs)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("agentmemory-server did not drain cleanly: %v\n%s", err, logs)
			}
		case <-time.After(40 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("agentmemory-server did not stop within 40 s of SIGTERM:\n%s", logs)
		}
	})

	target := &url.URL{Scheme: "http", Host: backend}
	rec := &recorder{proxy: &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.SetXForwarded() // the server is started with -trust-forwarded
		},
		FlushInterval: -1, // streams pass through as they come
	}}
	proxy := httptest.NewUnstartedServer(rec)
	proxy.StartTLS()
	t.Cleanup(proxy.Close)
	caFile := filepath.Join(dir, "proxy-ca.pem")
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: proxy.Certificate().Raw})
	if err := os.WriteFile(caFile, ca, 0o600); err != nil {
		t.Fatal(err)
	}
	return &docServer{url: proxy.URL, caFile: caFile, rec: rec, logs: logs}
}

// exchange is one request a snippet made and the status it was answered.
type exchange struct {
	method, path string
	status       int
	body         string // the start of the answer when it is an error
}

func (e exchange) String() string {
	s := fmt.Sprintf("%s %s: %d", e.method, e.path, e.status)
	if e.body != "" {
		s += " " + strings.TrimSpace(e.body)
	}
	return s
}

// recorder is the proxy between the snippets and the server. A snippet is
// judged by what the server answered it, not only by its exit status:
// curl -s exits 0 on a 404.
type recorder struct {
	proxy *httputil.ReverseProxy
	mu    sync.Mutex
	seen  []*exchange // each filled in as its answer is written
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sw := &statusWriter{ResponseWriter: w, rec: rec, method: r.Method, path: r.URL.RequestURI()}
	rec.proxy.ServeHTTP(sw, r)
	sw.record(http.StatusOK) // an answer without a body or a status
}

// take returns the exchanges recorded since the last take.
func (rec *recorder) take() []exchange {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	seen := make([]exchange, len(rec.seen))
	for i, e := range rec.seen {
		seen[i] = *e
	}
	rec.seen = nil
	return seen
}

// statusWriter records its exchange as the status is written, before the
// client can have it: a snippet that exits once it has its answer finds
// the exchange recorded, though the proxy's handler may return later. For
// an error it also keeps the start of the body.
type statusWriter struct {
	http.ResponseWriter
	rec          *recorder
	method, path string
	ex           *exchange // nil until the status is written
}

// record records the exchange with status, unless it is recorded already.
func (w *statusWriter) record(status int) {
	w.rec.mu.Lock()
	defer w.rec.mu.Unlock()
	if w.ex == nil {
		w.ex = &exchange{method: w.method, path: w.path, status: status}
		w.rec.seen = append(w.rec.seen, w.ex)
	}
}

func (w *statusWriter) WriteHeader(code int) {
	if code >= 200 { // 1xx answers come before the status
		w.record(code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	w.record(http.StatusOK)
	w.rec.mu.Lock()
	if w.ex.status >= 400 && len(w.ex.body) < 512 {
		w.ex.body += string(p[:min(len(p), 512-len(w.ex.body))])
	}
	w.rec.mu.Unlock()
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController flush a stream through the proxy.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// syncBuffer is a log written by one goroutine and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) add(p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.WriteString(p)
}

func (s *syncBuffer) String() string { return s.since(0) }

// len is how much has been written so far, for since.
func (s *syncBuffer) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Len()
}

// since returns what was written after the first n bytes.
func (s *syncBuffer) since(n int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()[n:]
}

// TestRecorderRecordsBeforeTheClientHasTheAnswer: a snippet's last
// exchange is its own once the snippet has its answer, even though the
// proxy's handler returns later (here, a stream that goes on).
func TestRecorderRecordsBeforeTheClientHasTheAnswer(t *testing.T) {
	release := make(chan struct{})
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":{"code":"not_found"}}`)
		w.(http.Flusher).Flush()
		<-release
	}))
	defer backend.Close()
	target, err := url.Parse(backend.URL)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{proxy: &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }, FlushInterval: -1}}
	proxy := httptest.NewServer(rec)
	defer proxy.Close()
	defer close(release) // first: the stream ends, then the servers close

	resp, err := http.Get(proxy.URL + "/memory_stores/nowhere")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("status %d through the proxy, want 404", resp.StatusCode)
	}
	got := rec.take()
	if len(got) != 1 || got[0].method != "GET" || got[0].path != "/memory_stores/nowhere" || got[0].status != http.StatusNotFound {
		t.Fatalf("recorded %v once the client had the answer's status, want the one GET answered 404", got)
	}
}
