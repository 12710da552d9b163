package metrics_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/metrics"
)

// The queue's figures are read once per scrape, as they are then.
func TestQueueFiguresAreReadAtEachScrape(t *testing.T) {
	rec, reg := newRecorder(t)
	var reads atomic.Int32
	stats := metrics.QueueStats{Depth: 7, OldestDue: time.Now().Add(-90 * time.Second), Claims: 12, Takeovers: 2, ExpiredLeases: 3}
	require.NoError(t, rec.WatchQueue(func(ctx context.Context) (metrics.QueueStats, error) {
		reads.Add(1)
		_, hasDeadline := ctx.Deadline()
		assert.True(t, hasDeadline, "a read of the queue is bounded")
		return stats, nil
	}))

	fams := scrape(t, reg)
	assert.Equal(t, int32(1), reads.Load(), "one read per scrape, not one per series")
	assert.Equal(t, 7.0, fams["agentmemory_update_queue_depth"].GetMetric()[0].GetGauge().GetValue())
	age := fams["agentmemory_update_queue_oldest_due_age_seconds"].GetMetric()[0].GetGauge().GetValue()
	assert.GreaterOrEqual(t, age, 90.0)
	assert.Less(t, age, 120.0)
	assert.Equal(t, 12.0, counter(fams, "agentmemory_update_claims_total"))
	assert.Equal(t, 2.0, counter(fams, "agentmemory_update_takeovers_total"))
	assert.Equal(t, 3.0, counter(fams, "agentmemory_update_expired_leases_total"))

	stats = metrics.QueueStats{Claims: 13, Takeovers: 2, ExpiredLeases: 3} // nothing due
	fams = scrape(t, reg)
	assert.Equal(t, int32(2), reads.Load())
	assert.Equal(t, 0.0, fams["agentmemory_update_queue_depth"].GetMetric()[0].GetGauge().GetValue())
	assert.Equal(t, 0.0, fams["agentmemory_update_queue_oldest_due_age_seconds"].GetMetric()[0].GetGauge().GetValue())
	assert.Equal(t, 13.0, counter(fams, "agentmemory_update_claims_total"))
}

// A scrape whose read of the queue fails still serves every other
// series, and counts the failure.
func TestAFailedQueueReadLeavesTheRestOfTheScrape(t *testing.T) {
	rec, reg := newRecorder(t)
	require.NoError(t, rec.WatchQueue(func(context.Context) (metrics.QueueStats, error) {
		return metrics.QueueStats{}, errors.New("store unreachable")
	}))
	rec.Request("get_update", 200, time.Millisecond)
	fams := scrape(t, reg)
	assert.NotContains(t, fams, "agentmemory_update_queue_depth")
	assert.Equal(t, uint64(1), count(fams, "agentmemory_http_request_duration_seconds", "operation", "get_update", "status", "200"))
	assert.Contains(t, fams, "go_goroutines")
	// The handler counts a failure after its answer: the next scrape
	// shows it.
	fams = scrape(t, reg)
	assert.Equal(t, 1.0, counter(fams, "promhttp_metric_handler_errors_total", "cause", "gathering"))

	assert.ErrorContains(t, rec.WatchQueue(nil), "nil stats func")
	var are prometheus.AlreadyRegisteredError
	err := rec.WatchQueue(func(context.Context) (metrics.QueueStats, error) { return metrics.QueueStats{}, nil })
	assert.ErrorAs(t, err, &are, "the queue's series are registered once")
}
