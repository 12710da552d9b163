package memoryservice

import (
	"fmt"
	"mime"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"
)

// apiVersions are the values of the api-version query parameter the
// service serves: "v1", what the official SDKs send (npm
// @azure/ai-projects 2.x), and the preview the Memory Store API was
// published under. A request without api-version is served as v1.
const apiVersions = "v1, 2025-11-15-preview"

// servedVersion reports whether the service serves api-version v.
func servedVersion(v string) bool { return v == "v1" || v == "2025-11-15-preview" }

// guard refuses, before authentication and before anything is read or
// written, what a web page could make a browser send:
//
//   - without keys, a request whose Host is not a loopback name or
//     address (421): a DNS-rebinding page reaches a loopback server under
//     its own host name;
//   - a cross-origin request that is not GET, HEAD or OPTIONS (403), by
//     http.CrossOriginProtection (Sec-Fetch-Site, else Origin against
//     Host), unless its origin is one of Config.AllowedOrigins, whose
//     preflight requests it answers;
//   - a request with a body not of Content-Type application/json (415),
//     which a page can send without a preflight as text/plain or a form;
//   - an api-version the service does not serve (400).
func (s *Service) guard(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	for _, o := range s.cfg.AllowedOrigins {
		// New checked each origin.
		_ = cop.AddTrustedOrigin(o)
	}
	keyless := len(s.cfg.Keys) == 0
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if keyless && !loopbackHost(r.Host) {
			refuse(w, r, &apiError{Status: http.StatusMisdirectedRequest, Code: "misdirected_request", Type: "invalid_request_error", Param: "Host",
				Message: fmt.Sprintf("Host: %q is not a loopback name or address; a server without API keys answers only requests addressed to localhost, 127.0.0.0/8 or [::1]", truncate(r.Host, 256))})
			return
		}
		origin := r.Header.Get("Origin")
		allowed := origin != "" && slices.Contains(s.cfg.AllowedOrigins, origin)
		if allowed {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Add("Vary", "Origin")
			h.Set("Access-Control-Expose-Headers", "Operation-Location, Retry-After, x-request-id, x-ms-client-request-id, Mcp-Session-Id, X-Memory")
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
				h.Set("Access-Control-Allow-Headers", "Authorization, api-key, Content-Type, x-ms-client-request-id, foundry-features, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID, X-Memory-User, X-Memory-Session")
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		if err := cop.Check(r); err != nil {
			refuse(w, r, &apiError{Status: http.StatusForbidden, Code: "cross_origin_refused", Type: "permission_error", Param: "Origin",
				Message: fmt.Sprintf("a cross-origin %s from %q is refused; a web app's origin is allowed by the server's configuration (agentmemory-server -allowed-origins)", r.Method, truncate(origin, 256))})
			return
		}
		if hasBody(r) {
			mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if err != nil || mt != "application/json" {
				refuse(w, r, &apiError{Status: http.StatusUnsupportedMediaType, Code: "unsupported_media_type", Type: "invalid_request_error", Param: "Content-Type",
					Message: fmt.Sprintf("Content-Type: %q; a request body must be application/json", truncate(r.Header.Get("Content-Type"), 256))})
				return
			}
		}
		if !strings.HasPrefix(r.URL.Path, "/mcp/") { // MCP has its own protocol version
			if v := r.URL.Query().Get("api-version"); v != "" && !servedVersion(v) {
				refuse(w, r, badRequest("api-version", "%q is not served; the versions served are %s", truncate(v, 64), apiVersions))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// hasBody reports whether r carries a body: a Content-Length above zero,
// or a chunked one.
func hasBody(r *http.Request) bool {
	return r.ContentLength > 0 || (r.ContentLength < 0 && r.Body != nil && r.Body != http.NoBody)
}

// refuse answers err to a request whose body is not read, and over
// HTTP/1 closes the connection after the answer: the server would
// otherwise read what is left of the body, at the client's pace, before
// answering (to reuse the connection) or before closing it. (Over HTTP/2
// the body is a stream's own, and Connection: close would end the
// connection's other streams.)
func refuse(w http.ResponseWriter, r *http.Request, err *apiError) {
	if r.ContentLength == 0 || r.ProtoMajor >= 2 {
		writeError(w, err)
		return
	}
	w.Header().Set("Connection", "close")
	writeError(w, err)
	// The rest of the body is not waited for: reading it fails at once.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
}

// loopbackHost reports whether a Host header names this machine only:
// localhost, an address of 127.0.0.0/8, or
// [::1], with or without a port.
func loopbackHost(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	} else if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// checkOrigins validates Config.AllowedOrigins: each is scheme://host,
// with an optional port and nothing else.
func checkOrigins(origins []string) error {
	cop := http.NewCrossOriginProtection()
	for i, o := range origins {
		if err := cop.AddTrustedOrigin(o); err != nil {
			return fmt.Errorf("memoryservice: Config.AllowedOrigins[%d] %q: %w", i, o, err)
		}
	}
	return nil
}
