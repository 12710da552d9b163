package metrics_test

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/metrics"
)

// newRecorder returns a Recorder on a registry of its own and the
// registry.
func newRecorder(t *testing.T) (*metrics.Recorder, *prometheus.Registry) {
	t.Helper()
	reg := metrics.NewRegistry()
	rec, err := metrics.New(reg)
	require.NoError(t, err)
	return rec, reg
}

// scrape reads reg through Handler over HTTP, as Prometheus does, and
// parses the text exposition.
func scrape(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(metrics.Handler(reg, nil))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Content-Type"), "text/plain")
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

// series returns the metric of family name whose labels are exactly
// labels (name, value pairs, in any order), or nil.
func series(fams map[string]*dto.MetricFamily, name string, labels ...string) *dto.Metric {
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	for _, m := range fams[name].GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		if maps.Equal(got, want) {
			return m
		}
	}
	return nil
}

// counter returns the value of a counter series, 0 when absent.
func counter(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	return series(fams, name, labels...).GetCounter().GetValue()
}

// count returns the sample count of a histogram series, 0 when absent.
func count(fams map[string]*dto.MetricFamily, name string, labels ...string) uint64 {
	return series(fams, name, labels...).GetHistogram().GetSampleCount()
}

func TestRequestsByOperationAndStatus(t *testing.T) {
	rec, reg := newRecorder(t)
	rec.Request("update_memories", 202, 3*time.Millisecond)
	rec.Request("update_memories", 202, 40*time.Millisecond)
	rec.Request("update_memories", 400, time.Millisecond)
	rec.Request("search_memories", 200, 2*time.Second)

	fams := scrape(t, reg)
	const name = "agentmemory_http_request_duration_seconds"
	assert.Equal(t, dto.MetricType_HISTOGRAM, fams[name].GetType())
	assert.Equal(t, uint64(2), count(fams, name, "operation", "update_memories", "status", "202"))
	assert.Equal(t, uint64(1), count(fams, name, "operation", "update_memories", "status", "400"))
	h := series(fams, name, "operation", "search_memories", "status", "200").GetHistogram()
	require.NotNil(t, h)
	assert.InDelta(t, 2.0, h.GetSampleSum(), 1e-9)
	for _, b := range h.GetBucket() {
		want := uint64(0)
		if b.GetUpperBound() >= 2 {
			want = 1
		}
		assert.Equal(t, want, b.GetCumulativeCount(), "bucket le=%g", b.GetUpperBound())
	}
}

// A Go server's Prometheus expects the go_* and process_* series.
func TestRegistryHasTheRuntimeAndProcessSeries(t *testing.T) {
	_, reg := newRecorder(t)
	fams := scrape(t, reg)
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "go_gc_duration_seconds",
		"process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds", "process_start_time_seconds"} {
		assert.Contains(t, fams, name)
	}
	// The roles' series are there at zero before any call.
	for _, role := range []string{"chat", "mini", "embed"} {
		assert.NotNil(t, series(fams, "agentmemory_model_tokens_total", "role", role, "type", "input"), role)
		assert.NotNil(t, series(fams, "agentmemory_model_call_errors_total", "role", role), role)
	}
}

func TestASecondRecorderOnOneRegistryIsRefused(t *testing.T) {
	_, reg := newRecorder(t)
	_, err := metrics.New(reg)
	var are prometheus.AlreadyRegisteredError
	require.ErrorAs(t, err, &are)
	_, err = metrics.New(nil)
	assert.ErrorContains(t, err, "nil prometheus.Registerer")
}
