package metrics

import (
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// namespace prefixes every series of a Recorder.
const namespace = "agentmemory"

// Buckets of the latency histograms, in seconds: a request spans a store
// read (a millisecond) to a search or a forget with model calls (many
// seconds); a model call takes from tens of milliseconds (an embedding)
// to a minute (a long answer); a store call from a fraction of a
// millisecond (SQLite) to seconds (Cosmos DB throttled and retried).
var (
	requestBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}
	modelBuckets   = []float64{.025, .05, .1, .25, .5, 1, 2.5, 5, 10, 20, 40, 80}
	storeBuckets   = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}
)

// Recorder holds the server's instruments. Its methods are safe for
// concurrent use, and do nothing on a nil *Recorder.
type Recorder struct {
	reg prometheus.Registerer

	requests *prometheus.HistogramVec // operation, status

	modelSeconds *prometheus.HistogramVec // role
	modelErrors  *prometheus.CounterVec   // role
	modelTokens  *prometheus.CounterVec   // role, type

	storeSeconds *prometheus.HistogramVec // operation
	storeErrors  *prometheus.CounterVec   // operation, error
}

// New returns a Recorder whose instruments are registered with reg. It
// fails, wrapping the registry's error, when reg already holds series of
// the same names (a second Recorder on one registry).
func New(reg prometheus.Registerer) (*Recorder, error) {
	if reg == nil {
		return nil, fmt.Errorf("metrics: New: nil prometheus.Registerer")
	}
	r := &Recorder{
		reg: reg,
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Subsystem: "http", Name: "request_duration_seconds",
			Help:    "Memory Store API requests by operation and status code, and how long they took to answer (the count is the number of requests).",
			Buckets: requestBuckets}, []string{"operation", "status"}),
		modelSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Subsystem: "model", Name: "call_duration_seconds",
			Help:    "Model calls by role (chat, mini, embed), failed ones included, and how long each took.",
			Buckets: modelBuckets}, []string{"role"}),
		modelErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Subsystem: "model", Name: "call_errors_total",
			Help: "Model calls that failed, by role."}, []string{"role"}),
		modelTokens: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Subsystem: "model", Name: "tokens_total",
			Help: "Tokens the model endpoint reported, by role and type (input: the prompt or the texts embedded; output: the answer)."}, []string{"role", "type"}),
		storeSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Subsystem: "store", Name: "call_duration_seconds",
			Help:    "Store calls by operation, failed ones included, and how long each took.",
			Buckets: storeBuckets}, []string{"operation"}),
		storeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Subsystem: "store", Name: "call_errors_total",
			Help: "Store calls that failed, by operation and error (not_found, conflict, invalid, closed, canceled, not_scrubbed, other)."}, []string{"operation", "error"}),
	}
	for _, c := range []prometheus.Collector{r.requests, r.modelSeconds, r.modelErrors, r.modelTokens, r.storeSeconds, r.storeErrors} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: registering the recorder's instruments: %w", err)
		}
	}
	// The roles' series exist from the start, at zero, so that a rate
	// over them is defined before the first call.
	for _, role := range []Role{RoleChat, RoleMini, RoleEmbed} {
		r.modelErrors.WithLabelValues(string(role))
		r.modelTokens.WithLabelValues(string(role), "input")
		if role != RoleEmbed {
			r.modelTokens.WithLabelValues(string(role), "output")
		}
	}
	return r, nil
}

// Request counts one request of the API operation op (snake_case, such as
// "update_memories") answered with status after d. Its signature is
// memoryservice.Config.ObserveRequest's.
func (r *Recorder) Request(op string, status int, d time.Duration) {
	if r == nil {
		return
	}
	r.requests.WithLabelValues(op, strconv.Itoa(status)).Observe(d.Seconds())
}

// NewRegistry returns a registry holding the Go runtime's collector (go_*:
// goroutines, memory, GC) and the process's (process_*: CPU, resident
// memory, open files, start time), which a Prometheus operator expects of
// every Go server, for New and Handler.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Handler serves g's series in the exposition format Prometheus asks for
// (text by default). A collector that fails is logged to log and left
// out of the answer, and the rest is served; the failures are counted in
// promhttp_metric_handler_errors_total when g is also a
// prometheus.Registerer.
func Handler(g prometheus.Gatherer, log *slog.Logger) http.Handler {
	opts := promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}
	if log != nil {
		opts.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelError)
	}
	if reg, ok := g.(prometheus.Registerer); ok {
		opts.Registry = reg
	}
	return promhttp.HandlerFor(g, opts)
}
