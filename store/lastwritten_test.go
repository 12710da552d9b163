package store_test

import (
	"testing"
	"time"

	"github.com/agentmemory/agentmemory/store"
)

func TestLastWritten(t *testing.T) {
	t1 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t2, t3 := t1.Add(time.Hour), t1.Add(2*time.Hour)
	zeroElsewhere := time.Time{}.In(time.FixedZone("X", 3600))
	for _, c := range []struct {
		name string
		got  time.Time
		want time.Time
	}{
		{"session: its update", (&store.Session{StartTime: t1, EndTime: t2, UpdatedAt: t3}).LastWritten(), t3},
		{"session: its end", (&store.Session{StartTime: t1, EndTime: t2}).LastWritten(), t2},
		{"session: its start", (&store.Session{StartTime: t1, UpdatedAt: zeroElsewhere}).LastWritten(), t1},
		{"session: nothing", (&store.Session{}).LastWritten(), time.Time{}},
		{"insight: its update", (&store.Insight{CreatedAt: t1, UpdatedAt: t2}).LastWritten(), t2},
		{"insight: its creation", (&store.Insight{CreatedAt: t1}).LastWritten(), t1},
		{"interaction: its timestamp", (&store.Interaction{Timestamp: t2}).LastWritten(), t2},
	} {
		if !c.got.Equal(c.want) {
			t.Errorf("%s: LastWritten = %v, want %v", c.name, c.got, c.want)
		}
	}
}
