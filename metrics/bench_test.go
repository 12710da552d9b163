package metrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentmemory/agentmemory/metrics"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/mem"
)

// BenchmarkStoreCall measures what counting adds to a store call, on
// store/mem's in-memory read (the cheapest call there is).
func BenchmarkStoreCall(b *testing.B) {
	ctx := context.Background()
	rec, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		wrap func(store.Store) store.Store
	}{{"bare", func(st store.Store) store.Store { return st }}, {"counted", rec.Store}} {
		b.Run(c.name, func(b *testing.B) {
			st := c.wrap(mem.New(mem.Config{}))
			defer st.Close()
			if err := st.PutUserState(ctx, "alice", &store.UserState{}); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := st.GetUserState(ctx, "alice"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRequest measures counting one request.
func BenchmarkRequest(b *testing.B) {
	rec, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		rec.Request("update_memories", 202, 3*time.Millisecond)
	}
}
