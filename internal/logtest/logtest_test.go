package logtest_test

import (
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/agentmemory/agentmemory/internal/logtest"
)

func TestLogsCollectsConcurrentRecords(t *testing.T) {
	var logs logtest.Logs
	log := logs.Logger(&slog.HandlerOptions{Level: slog.LevelWarn})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			log.Warn("store down")
			log.Info("left out below the level")
		})
	}
	wg.Wait()
	got := logs.String()
	if n := strings.Count(got, "msg=\"store down\""); n != 8 {
		t.Errorf("%d records of 8:\n%s", n, got)
	}
	if strings.Contains(got, "left out") {
		t.Errorf("a record below the level was written:\n%s", got)
	}
}
