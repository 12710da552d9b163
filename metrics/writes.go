package metrics

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// WriteStats are a SQLite store's write figures since it opened, read at
// each scrape (sqlite.WriteStats has the same fields, so
// metrics.WriteStats(st.WriteStats()) converts one). Durations are sums.
type WriteStats struct {
	Commits, Writes    int64
	Wait, Busy, Commit time.Duration
	Checkpoints        int64
	CheckpointTime     time.Duration
}

// WatchWrites registers the series of a SQLite store's one writer, which
// call stats once at each scrape: agentmemory_sqlite_commits_total,
// agentmemory_sqlite_writes_total,
// agentmemory_sqlite_write_wait_seconds_total,
// agentmemory_sqlite_writer_busy_seconds_total,
// agentmemory_sqlite_commit_seconds_total,
// agentmemory_sqlite_checkpoints_total and
// agentmemory_sqlite_checkpoint_seconds_total. They are this process's:
// several processes on one file each count their own writes. On a nil
// Recorder it does nothing.
func (r *Recorder) WatchWrites(stats func() WriteStats) error {
	if r == nil {
		return nil
	}
	if stats == nil {
		return errors.New("metrics: WatchWrites: nil stats func")
	}
	if err := r.reg.Register(writesCollector(stats)); err != nil {
		return fmt.Errorf("metrics: registering the SQLite writer's series: %w", err)
	}
	return nil
}

var (
	commitsDesc = prometheus.NewDesc(namespace+"_sqlite_commits_total",
		"Transactions the SQLite store's writer committed: one per batch of concurrent writes (group commit).", nil, nil)
	writesDesc = prometheus.NewDesc(namespace+"_sqlite_writes_total",
		"Writes the SQLite store committed.", nil, nil)
	writeWaitDesc = prometheus.NewDesc(namespace+"_sqlite_write_wait_seconds_total",
		"Time the committed writes waited for their batch, summed over the writes; over writes_total, the mean wait.", nil, nil)
	writerBusyDesc = prometheus.NewDesc(namespace+"_sqlite_writer_busy_seconds_total",
		"Time the one writer spent running batches; a rate near 1 is a saturated writer.", nil, nil)
	commitDesc = prometheus.NewDesc(namespace+"_sqlite_commit_seconds_total",
		"Time in COMMIT (the WAL's write and fsync); over commits_total, the mean commit.", nil, nil)
	checkpointsDesc = prometheus.NewDesc(namespace+"_sqlite_checkpoints_total",
		"Passive WAL checkpoints run in the background.", nil, nil)
	checkpointTimeDesc = prometheus.NewDesc(namespace+"_sqlite_checkpoint_seconds_total",
		"Time the background WAL checkpoints took.", nil, nil)
)

// writesCollector reads the writer's figures once per scrape.
type writesCollector func() WriteStats

func (w writesCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{commitsDesc, writesDesc, writeWaitDesc, writerBusyDesc, commitDesc, checkpointsDesc, checkpointTimeDesc} {
		ch <- d
	}
}

func (w writesCollector) Collect(ch chan<- prometheus.Metric) {
	s := w()
	for _, m := range []struct {
		d *prometheus.Desc
		v float64
	}{
		{commitsDesc, float64(s.Commits)},
		{writesDesc, float64(s.Writes)},
		{writeWaitDesc, s.Wait.Seconds()},
		{writerBusyDesc, s.Busy.Seconds()},
		{commitDesc, s.Commit.Seconds()},
		{checkpointsDesc, float64(s.Checkpoints)},
		{checkpointTimeDesc, s.CheckpointTime.Seconds()},
	} {
		ch <- prometheus.MustNewConstMetric(m.d, prometheus.CounterValue, m.v)
	}
}
