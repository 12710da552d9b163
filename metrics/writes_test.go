package metrics_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/metrics"
)

// The SQLite writer's figures are counters, read at each scrape.
func TestWriterFiguresAreReadAtEachScrape(t *testing.T) {
	rec, reg := newRecorder(t)
	stats := metrics.WriteStats{Commits: 10, Writes: 120, Wait: 1500 * time.Millisecond, Busy: 2 * time.Second,
		Commit: 700 * time.Millisecond, Checkpoints: 3, CheckpointTime: 45 * time.Millisecond}
	require.NoError(t, rec.WatchWrites(func() metrics.WriteStats { return stats }))
	fams := scrape(t, reg)
	for name, want := range map[string]float64{
		"agentmemory_sqlite_commits_total":             10,
		"agentmemory_sqlite_writes_total":              120,
		"agentmemory_sqlite_write_wait_seconds_total":  1.5,
		"agentmemory_sqlite_writer_busy_seconds_total": 2,
		"agentmemory_sqlite_commit_seconds_total":      0.7,
		"agentmemory_sqlite_checkpoints_total":         3,
		"agentmemory_sqlite_checkpoint_seconds_total":  0.045,
	} {
		assert.InDelta(t, want, counter(fams, name), 1e-9, name)
	}
	stats.Writes = 121
	assert.Equal(t, 121.0, counter(scrape(t, reg), "agentmemory_sqlite_writes_total"))

	assert.ErrorContains(t, rec.WatchWrites(nil), "nil stats func")
	var are prometheus.AlreadyRegisteredError
	assert.ErrorAs(t, rec.WatchWrites(func() metrics.WriteStats { return metrics.WriteStats{} }), &are)
	var none *metrics.Recorder
	assert.NoError(t, none.WatchWrites(nil), "a nil Recorder watches nothing")
}
