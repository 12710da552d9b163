// Package metrics is the memory server's Prometheus instruments: a
// Recorder counts and times the API's requests, the model calls and the
// store calls the server makes, and reads the update queue's figures when
// Prometheus scrapes, so that an operator's Prometheus sees what each
// replica does. cmd/agentmemory-server serves them at /metrics.
//
// # Use
//
// A Recorder registers its instruments with a prometheus.Registerer;
// NewRegistry adds the Go runtime's and the process's collectors, and
// Handler serves a registry in the exposition format:
//
//	reg := metrics.NewRegistry()
//	rec, err := metrics.New(reg)
//	st = rec.Store(st)                  // store calls
//	cfg.ObserveRequest = rec.Request    // memoryservice.Config: requests
//	cfg.WrapModels = rec.Models         // memoryservice.Config: model calls
//	err = rec.WatchQueue(queueStats)    // the queue, read at each scrape
//	http.Handle("GET /metrics", metrics.Handler(reg, logger))
//
// Every method works on a nil *Recorder and then does nothing (the
// decorators return what they were given), so a caller without metrics
// pays nothing and needs no branch.
//
// # Why client_golang
//
// github.com/prometheus/client_golang is the Prometheus project's own Go
// client, the one an operator's Prometheus and its dashboards are written
// against: it writes the text exposition format (and the protobuf and
// OpenMetrics ones when the scraper asks), negotiates gzip, has the
// classic histograms with cumulative buckets that PromQL's
// histogram_quantile reads, and its collectors export the go_* and
// process_* series (memory, goroutines, GC, CPU, open files) every Go
// service is expected to have. It brings the Prometheus data model and
// exposition packages (client_model, common), procfs, protobuf and three
// small helpers (xxhash, perks, goautoneg). OpenTelemetry's SDK with a
// Prometheus exporter would serve the same text through a larger graph
// of modules, and writing the format by hand would leave out the
// negotiation and the runtime collectors.
//
// # Replicas
//
// A Recorder adds no replica label: Prometheus labels every series it
// scrapes with the target's instance (its address, or the pod's name
// under Kubernetes service discovery), so each replica's series are its
// own when each replica is scraped as a target of its own — never through
// the load balancer, which would mix them. A label of the process's own
// would repeat instance, and a new one at each restart would make new
// series. The queue's depth and oldest due age are the shared queue's,
// the same seen from every replica: aggregate them with max, not sum; its
// claims, takeovers and expired leases are each replica's own.
//
// # Series
//
// The series, their types, labels and meaning are listed in docs/server.md
// (section Metrics); every duration is in seconds, and every series of a
// Recorder is prefixed agentmemory_.
package metrics
