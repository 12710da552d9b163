package memoryservice

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// Defaults of the request rate limit (Config.RateLimit, Config.RateBurst).
const (
	DefaultRateLimit = 100 // requests a second, per API key
	DefaultRateBurst = 200
)

// maxLogField bounds a request's path or an error in a log line.
const maxLogField = 512

// limiter holds one token bucket per API key, and one for every request
// of a server without keys (which serves loopback only, where every
// client's address is the machine's own). The buckets are fixed at start:
// nothing a client sends adds one.
type limiter struct {
	rate, burst float64 // tokens a second; the bucket's size
	now         func() time.Time

	mu      sync.Mutex
	buckets []bucket // by key index; the last for a server without keys
}

type bucket struct {
	tokens float64
	last   time.Time
}

// newLimiter returns a limiter of rate requests a second and bursts of
// burst for n keys, or nil for no limit (rate negative).
func newLimiter(rate float64, burst, n int, now func() time.Time) *limiter {
	if rate < 0 {
		return nil
	}
	l := &limiter{rate: rate, burst: float64(burst), now: now, buckets: make([]bucket, n+1)}
	for i := range l.buckets {
		l.buckets[i].tokens = l.burst
	}
	return l
}

// take takes a token from bucket i, or says how long until one is there.
func (l *limiter) take(i int) (ok bool, wait time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := &l.buckets[i]
	now := l.now()
	if !b.last.IsZero() {
		b.tokens = math.Min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.rate)
	}
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
}

// admit takes a token of key i's bucket (i = len(Config.Keys) without
// keys) and reports whether the request goes on; if not, it has answered
// 429 with Retry-After.
func (s *Service) admit(w http.ResponseWriter, r *http.Request, i int) bool {
	if s.limit == nil {
		return true
	}
	ok, wait := s.limit.take(i)
	if ok {
		return true
	}
	secs := int64(math.Ceil(wait.Seconds()))
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	refuse(w, r, &apiError{Status: http.StatusTooManyRequests, Code: "too_many_requests", Type: "rate_limit_error",
		Message: fmt.Sprintf("more than %g requests a second (bursts of %g) with this API key; retry after %d s", s.limit.rate, s.limit.burst, secs)})
	return false
}

// truncate cuts s to at most n bytes (at a character boundary), saying
// how long it was.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}
