package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// BenchmarkGetRecord measures a point read of a record, the read the
// memory service makes several of for each request, from parallel
// goroutines (b.RunParallel: GOMAXPROCS of them).
func BenchmarkGetRecord(b *testing.B) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "r.db"), sqlite.Config{Dimensions: dims})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const records = 64
	at := time.Date(2026, 11, 27, 2, 0, 0, 0, time.UTC)
	for i := range records {
		r := &store.Record{ID: fmt.Sprintf("update.%04d", i), Time: at, Active: true, Body: []byte(benchRecordBody), ETag: store.CreateOnly}
		if err := s.PutRecord(ctx, "registry", r); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for i := 0; pb.Next(); i++ {
			if _, err := s.GetRecord(ctx, "registry", fmt.Sprintf("update.%04d", i%records)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
