package memoryservice

import (
	"net/http"
	"net/url"
	"strings"
)

// publicAddress returns the scheme and host a client reached the service
// at: the connection's, or, with Config.TrustForwarded, what a proxy in
// front says in the Forwarded header (RFC 7239: proto and host of its
// first element) or in X-Forwarded-Proto and X-Forwarded-Host (their first
// values). A malformed forwarded value is ignored.
func (s *Service) publicAddress(r *http.Request) (scheme, host string) {
	scheme, host = "http", r.Host
	if r.TLS != nil {
		scheme = "https"
	}
	if !s.cfg.TrustForwarded {
		return scheme, host
	}
	var proto, fhost string
	if v := r.Header.Get("Forwarded"); v != "" {
		first, _, _ := strings.Cut(v, ",")
		for _, pair := range strings.Split(first, ";") {
			k, val, ok := strings.Cut(strings.TrimSpace(pair), "=")
			if !ok {
				continue
			}
			val = strings.Trim(strings.TrimSpace(val), `"`)
			switch strings.ToLower(strings.TrimSpace(k)) {
			case "proto":
				proto = val
			case "host":
				fhost = val
			}
		}
	}
	if proto == "" {
		proto = firstValue(r.Header.Get("X-Forwarded-Proto"))
	}
	if fhost == "" {
		fhost = firstValue(r.Header.Get("X-Forwarded-Host"))
	}
	if p := strings.ToLower(proto); p == "http" || p == "https" {
		scheme = p
	}
	if validHost(fhost) {
		host = fhost
	}
	return scheme, host
}

// firstValue is the first of a comma-separated header's values.
func firstValue(v string) string {
	first, _, _ := strings.Cut(v, ",")
	return strings.TrimSpace(first)
}

// validHost reports whether h is a bare host or host:port, with nothing a
// URL would read as a path, query, fragment or user.
func validHost(h string) bool {
	if h == "" || len(h) > 255 || strings.ContainsAny(h, "/?#@\\ \t\"") {
		return false
	}
	u, err := url.Parse("http://" + h)
	return err == nil && u.Host == h && u.Path == "" && u.Hostname() != ""
}
