package memoryservice

import (
	"fmt"
	"math"
	"net"
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
	return l.buckets[i].take(l.now(), l.rate, l.burst)
}

// take refills b for the time since its last take, then takes a token,
// or says how long until one is there.
func (b *bucket) take(now time.Time, rate, burst float64) (ok bool, wait time.Duration) {
	b.refill(now, rate, burst)
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / rate * float64(time.Second))
}

func (b *bucket) refill(now time.Time, rate, burst float64) {
	if !b.last.IsZero() {
		b.tokens = math.Min(burst, b.tokens+now.Sub(b.last).Seconds()*rate)
	}
	b.last = now
}

// maxAddresses bounds the client addresses whose failed authentications
// are counted (addrLimiter).
const maxAddresses = 4096

// addrLimiter holds a token bucket per client address for the requests
// that fail authentication, so that a flood of guessed keys is answered
// 429, not 401 after 401, while the right key from the same address goes
// on. At most max addresses have a bucket: when the table is full, the
// buckets full again (their address idle) give way, and failing that the
// new addresses share one bucket.
type addrLimiter struct {
	rate, burst float64
	max         int
	now         func() time.Time

	mu       sync.Mutex
	buckets  map[string]*bucket
	overflow bucket
}

// newAddrLimiter returns a limiter of rate failures a second and bursts
// of burst per address, or nil for no limit (rate negative).
func newAddrLimiter(rate float64, burst, max int, now func() time.Time) *addrLimiter {
	if rate < 0 {
		return nil
	}
	return &addrLimiter{rate: rate, burst: float64(burst), max: max, now: now,
		buckets: map[string]*bucket{}, overflow: bucket{tokens: float64(burst)}}
}

// take takes a token of addr's bucket, or says how long until one is
// there.
func (l *addrLimiter) take(addr string) (ok bool, wait time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b := l.buckets[addr]
	if b == nil {
		if len(l.buckets) >= l.max {
			for a, idle := range l.buckets {
				if idle.refill(now, l.rate, l.burst); idle.tokens >= l.burst {
					delete(l.buckets, a)
				}
			}
		}
		if len(l.buckets) < l.max {
			b = &bucket{tokens: l.burst}
			l.buckets[addr] = b
		} else {
			b = &l.overflow
		}
	}
	return b.take(now, l.rate, l.burst)
}

// admit takes a token of key i's bucket (i = len(Config.Keys) without
// keys) and reports whether the request goes on; if not, it has answered
// 429 with Retry-After.
func (s *Service) admit(w http.ResponseWriter, r *http.Request, i int) bool {
	if s.limit == nil {
		return true
	}
	ok, wait := s.limit.take(i)
	if !ok {
		tooMany(w, r, wait, "more than %g requests a second (bursts of %g) with this API key", s.limit.rate, s.limit.burst)
	}
	return ok
}

// tooMany answers 429 with Retry-After, the wait rounded up to seconds,
// saying what was exceeded (format and args) and when to retry.
func tooMany(w http.ResponseWriter, r *http.Request, wait time.Duration, format string, args ...any) {
	secs := int64(math.Ceil(wait.Seconds()))
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	refuse(w, r, &apiError{Status: http.StatusTooManyRequests, Code: "too_many_requests", Type: "rate_limit_error",
		Message: fmt.Sprintf(format, args...) + fmt.Sprintf("; retry after %d s", secs)})
}

// admitFailure counts a request that failed authentication against its
// client address and reports whether to answer it 401; if not, it has
// answered 429 with Retry-After. The address is the connection's peer,
// never a forwarded header a client could vary.
func (s *Service) admitFailure(w http.ResponseWriter, r *http.Request) bool {
	if s.failures == nil {
		return true
	}
	addr, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		addr = r.RemoteAddr
	}
	ok, wait := s.failures.take(addr)
	if !ok {
		tooMany(w, r, wait, "more than %g failed authentications a second (bursts of %g) from this address", s.failures.rate, s.failures.burst)
	}
	return ok
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
