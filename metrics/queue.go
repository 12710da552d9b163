package metrics

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// QueueStats are the update queue's figures, read at each scrape: the
// queue's, which every replica on the store shares, and this replica's
// part in it (memoryservice.Service.QueueStats has the same fields, so
// metrics.QueueStats(qs) converts one).
type QueueStats struct {
	// Depth is how many updates are not finished: queued (due or not)
	// or running, on any replica.
	Depth int
	// OldestDue is the due time of the update that has waited longest
	// for a replica to claim it; zero when none is waiting.
	OldestDue time.Time
	// Claims counts the updates this replica claimed since it started,
	// Takeovers those of them whose earlier claim had expired, and
	// ExpiredLeases this replica's claims found lost while it still ran
	// the update.
	Claims, Takeovers, ExpiredLeases int64
}

// queueStatsTimeout bounds one read of the queue's figures.
const queueStatsTimeout = 10 * time.Second

// WatchQueue registers the queue's series, which call stats once at each
// scrape: agentmemory_update_queue_depth,
// agentmemory_update_queue_oldest_due_age_seconds,
// agentmemory_update_claims_total, agentmemory_update_takeovers_total and
// agentmemory_update_expired_leases_total. A scrape whose stats call
// fails is served without them, and the failure is logged by Handler.
// On a nil Recorder it does nothing.
func (r *Recorder) WatchQueue(stats func(context.Context) (QueueStats, error)) error {
	if r == nil {
		return nil
	}
	if stats == nil {
		return errors.New("metrics: WatchQueue: nil stats func")
	}
	if err := r.reg.Register(&queueCollector{stats: stats, now: time.Now}); err != nil {
		return fmt.Errorf("metrics: registering the queue's series: %w", err)
	}
	return nil
}

var (
	queueDepthDesc = prometheus.NewDesc(namespace+"_update_queue_depth",
		"Updates not finished, queued (due or not) or running, on any replica: the shared queue's, the same from every replica.", nil, nil)
	queueAgeDesc = prometheus.NewDesc(namespace+"_update_queue_oldest_due_age_seconds",
		"How long the update waiting longest for a replica to claim it has waited past its due time; 0 when none is waiting.", nil, nil)
	claimsDesc = prometheus.NewDesc(namespace+"_update_claims_total",
		"Updates this replica claimed to run since it started.", nil, nil)
	takeoversDesc = prometheus.NewDesc(namespace+"_update_takeovers_total",
		"Updates this replica claimed whose earlier claim, another holder's, had expired.", nil, nil)
	expiredDesc = prometheus.NewDesc(namespace+"_update_expired_leases_total",
		"Claims of this replica found lost (not renewed in time and taken over) while it still ran the update.", nil, nil)
)

// queueCollector reads the queue's figures once per scrape and reports
// them as constant metrics: one read of the store, not one per series as
// five GaugeFuncs would make.
type queueCollector struct {
	stats func(context.Context) (QueueStats, error)
	now   func() time.Time
}

func (q *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{queueDepthDesc, queueAgeDesc, claimsDesc, takeoversDesc, expiredDesc} {
		ch <- d
	}
}

func (q *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), queueStatsTimeout)
	defer cancel()
	s, err := q.stats(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(queueDepthDesc, fmt.Errorf("metrics: reading the update queue's figures: %w", err))
		return
	}
	age := 0.0
	if !s.OldestDue.IsZero() {
		age = max(0, q.now().Sub(s.OldestDue).Seconds())
	}
	ch <- prometheus.MustNewConstMetric(queueDepthDesc, prometheus.GaugeValue, float64(s.Depth))
	ch <- prometheus.MustNewConstMetric(queueAgeDesc, prometheus.GaugeValue, age)
	ch <- prometheus.MustNewConstMetric(claimsDesc, prometheus.CounterValue, float64(s.Claims))
	ch <- prometheus.MustNewConstMetric(takeoversDesc, prometheus.CounterValue, float64(s.Takeovers))
	ch <- prometheus.MustNewConstMetric(expiredDesc, prometheus.CounterValue, float64(s.ExpiredLeases))
}
