package plot

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkTimeline draws 10,000 events: sessions and insights over a
// week.
func BenchmarkTimeline(b *testing.B) {
	events := make([]Event, 0, 10_000)
	for i := range 10_000 {
		at := t0.Add(time.Duration(i) * time.Minute)
		e := Event{At: at, Lane: "insights", Label: "insight " + strconv.Itoa(i), Href: "/i/" + strconv.Itoa(i)}
		if i%2 == 0 {
			e.Lane, e.End = "sessions", at.Add(40*time.Second)
		}
		events = append(events, e)
	}
	b.ReportAllocs()
	var size int
	for b.Loop() {
		size = len(Timeline(events, TimelineOptions{Title: "Sessions and insights"}))
	}
	b.ReportMetric(float64(size), "bytes/svg")
}

// BenchmarkLines draws two series of 10,000 points each.
func BenchmarkLines(b *testing.B) {
	series := []Series{{Name: "latency", Unit: "ms"}, {Name: "tokens", Unit: "ms"}}
	for i := range 10_000 {
		at := t0.Add(time.Duration(i) * time.Minute)
		for k := range series {
			series[k].Points = append(series[k].Points, Point{At: at, Value: float64((i*7919+k*31)%1000 + 100), Label: "update " + strconv.Itoa(i)})
		}
	}
	b.ReportAllocs()
	var size int
	for b.Loop() {
		size = len(Lines(series, ChartOptions{Title: "Latency"}))
	}
	b.ReportMetric(float64(size), "bytes/svg")
}
