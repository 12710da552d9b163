package plot

import (
	"math"
	"testing"
	"time"
)

// FuzzTimeline checks that any events draw a well-formed, inert SVG of
// bounded size without panicking.
func FuzzTimeline(f *testing.F) {
	f.Add("Sessions", "sessions", "</svg><script>alert(1)</script>", "javascript:alert(1)", t0.Unix(), int64(time.Hour), uint16(5), 0, 0)
	f.Add("", "", "", "/s/1", int64(0), int64(0), uint16(1), 100, 100)
	f.Add("\xff", "\x00", "]]>", "https://x", int64(-62135596800), int64(-1), uint16(300), 8000, 1)
	f.Add("t", "l", "e", "", int64(253402300799), int64(math.MaxInt64), uint16(999), -1, 1<<30)
	f.Fuzz(func(t *testing.T, title, lane, label, href string, at, step int64, n uint16, width, height int) {
		var events []Event
		for i := range int(n % 1000) {
			start := time.Unix(at, 0).Add(time.Duration(i) * time.Duration(step))
			e := Event{At: start, Lane: lane, Label: label, Href: href}
			if i%3 != 0 {
				e.End = start.Add(time.Duration(step) / 2)
			}
			if i%4 == 1 {
				e.Lane = label
			}
			events = append(events, e)
		}
		out := Timeline(events, TimelineOptions{Width: width, Height: height, Title: title})
		doc, err := decode(string(out))
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, out)
		}
		inert(t, doc)
		marksInside(t, "timeline", doc, laneLabelWidth)
		if len(out) > 4<<20 {
			t.Fatalf("output is %d bytes", len(out))
		}
	})
}

// FuzzLines checks that any series draw a well-formed, inert SVG of
// bounded size without panicking.
func FuzzLines(f *testing.F) {
	f.Add("Latency", "search", "ms", "<script>", "/u/1", t0.Unix(), int64(time.Minute), 1.5, 2.5, uint16(10), 0, 0)
	f.Add("", "", "", "", "", int64(0), int64(0), 0.0, 0.0, uint16(1), 1, 1)
	f.Add("\x00", "\xff", "]]>", "\r", "data:x", int64(-62135596800), int64(1), math.NaN(), math.Inf(1), uint16(2000), 8001, 99)
	f.Add("t", "s", "u", "l", "h", int64(253402300799), int64(-1), -1e300, 1e300, uint16(3), 800, 300)
	f.Add("t", "s", "u", "l", "h", int64(0), int64(1), 1.0, 1e-300, uint16(3), 800, 300)
	f.Fuzz(func(t *testing.T, title, name, unit, label, href string, at, step int64, v0, dv float64, n uint16, width, height int) {
		var series []Series
		for k := range 3 {
			s := Series{Name: name, Unit: unit}
			if k == 1 {
				s.Unit = label
			}
			for i := range int(n % 2000) {
				s.Points = append(s.Points, Point{
					At:    time.Unix(at, 0).Add(time.Duration(i) * time.Duration(step)),
					Value: v0 + float64(i*(k+1))*dv,
					Label: label, Href: href,
				})
			}
			series = append(series, s)
		}
		out := Lines(series, ChartOptions{Width: width, Height: height, Title: title, Unit: unit})
		doc, err := decode(string(out))
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, out)
		}
		inert(t, doc)
		marksInside(t, "lines", doc, yAxisWidth)
		if len(out) > 4<<20 {
			t.Fatalf("output is %d bytes", len(out))
		}
	})
}
