package plot

import (
	"html/template"
	"strconv"
	"strings"
	"testing"
	"time"
)

// marks are the timeline's marks: bars and circles of class mark.
func marks(doc svgDoc) []elem {
	var out []elem
	for _, e := range doc.elems {
		if e.hasClass("mark") {
			out = append(out, e)
		}
	}
	return out
}

// tooltips are the texts of the titles of the marks, in order.
func tooltips(doc svgDoc) []string {
	var out []string
	for _, e := range doc.all("title") {
		if p := e.path[len(e.path)-1]; p == "rect" || p == "circle" {
			out = append(out, e.text)
		}
	}
	return out
}

func TestTimelineLanesAndMarks(t *testing.T) {
	events := []Event{
		{At: t0, End: t0.Add(40 * time.Minute), Lane: "sessions", Label: "planning", Href: "/s/1"},
		{At: t0.Add(3 * time.Hour), Lane: "insights", Label: "prefers window seats"},
		{At: t0.Add(2 * time.Hour), End: t0.Add(2*time.Hour + 25*time.Minute + 30*time.Second), Lane: "sessions", Label: "booking"},
		{At: t0.Add(26 * time.Hour), Lane: "insights", Label: "lives in Lyon"},
	}
	doc := parse(t, Timeline(events, TimelineOptions{Title: "Memory"}))
	if got := doc.texts("lane-label"); strings.Join(got, ",") != "sessions,insights" {
		t.Errorf("lanes %q, want sessions then insights, as they first appear", got)
	}
	ms := marks(doc)
	var bars, points int
	for _, m := range ms {
		switch {
		case m.name == "rect" && m.hasClass("interval"):
			bars++
		case m.name == "circle" && m.hasClass("point"):
			points++
		}
	}
	if bars != 2 || points != 2 {
		t.Errorf("%d bars and %d points, want 2 and 2", bars, points)
	}
	want := []string{
		"planning\n2026-03-04 09:00:00 – 09:40:00 UTC (40m0s)",
		"booking\n2026-03-04 11:00:00 – 11:25:30 UTC (25m30s)",
		"prefers window seats\n2026-03-04 12:00:00 UTC",
		"lives in Lyon\n2026-03-05 11:00:00 UTC",
	}
	if got := tooltips(doc); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("tooltips\n%q\nwant\n%q", got, want)
	}
	if links := doc.all("a"); len(links) != 1 || links[0].attrs["href"] != "/s/1" {
		t.Errorf("links %v, want the one to /s/1", links)
	}
	if doc.elems[0].attrs["aria-label"] != "Memory" || doc.texts("plot-title")[0] != "Memory" {
		t.Errorf("title not the accessible name and heading")
	}
	// The bar's x and width follow its times: 40 minutes of a span
	// that ends 26 hours after it starts.
	bar := ms[0]
	x, _ := strconv.ParseFloat(bar.attrs["x"], 64)
	w, _ := strconv.ParseFloat(bar.attrs["width"], 64)
	plotW := 800.0 - laneLabelWidth - marginRight
	if x != laneLabelWidth || w < plotW*40/(26*60)-0.1 || w > plotW*40/(26*60)+0.1 {
		t.Errorf("first bar at x %g width %g, want %g and %g", x, w, laneLabelWidth, plotW*40/(26*60))
	}
}

func TestTimelineEdgeCases(t *testing.T) {
	for name, events := range map[string][]Event{
		"nil":            nil,
		"zero times":     {{Lane: "sessions", Label: "no time"}},
		"beyond 9999 AD": {{At: time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC)}},
	} {
		doc := parse(t, Timeline(events, TimelineOptions{}))
		if got := doc.texts("no-data"); len(got) != 1 {
			t.Errorf("%s: no-data text %q", name, got)
		}
		if doc.elems[0].attrs["role"] != "img" || doc.elems[0].attrs["aria-label"] == "" {
			t.Errorf("%s: root attributes %v", name, doc.elems[0].attrs)
		}
	}

	// End before At is a point; a zero End is a point; one instant is
	// centred on an hour's axis.
	doc := parse(t, Timeline([]Event{
		{At: t0, End: t0.Add(-time.Hour), Label: "backwards"},
		{At: t0, Label: "same instant"},
	}, TimelineOptions{Width: 400}))
	circles := doc.all("circle")
	if len(circles) != 2 || len(doc.all("rect")) != 1 { // the one lane's background
		t.Fatalf("%d circles and %d rects, want 2 points and a lane", len(circles), len(doc.all("rect")))
	}
	mid := laneLabelWidth + (400-laneLabelWidth-marginRight)/2
	for _, c := range circles {
		if cx, _ := strconv.ParseFloat(c.attrs["cx"], 64); cx != mid {
			t.Errorf("point at x %g, want the middle %g", cx, mid)
		}
	}
	if got := doc.texts("tick"); strings.Join(got, " ") != "08:30 09:00 09:30" {
		t.Errorf("ticks around one instant %q", got)
	}
}

func TestTimelineIsDeterministicAndUTC(t *testing.T) {
	var utc, local []Event
	tz := time.FixedZone("UTC-7", -7*3600)
	for i := range 50 {
		at := t0.Add(time.Duration(i*i) * time.Minute)
		e := Event{At: at, End: at.Add(time.Duration(i) * time.Minute), Lane: "l" + strconv.Itoa(i%3), Label: "e" + strconv.Itoa(i)}
		utc = append(utc, e)
		e.At, e.End = e.At.In(tz), e.End.In(tz)
		local = append(local, e)
	}
	a := Timeline(utc, TimelineOptions{})
	if b := Timeline(utc, TimelineOptions{}); a != b {
		t.Error("two calls with the same input differ")
	}
	if b := Timeline(local, TimelineOptions{}); a != b {
		t.Error("the same instants in another zone draw differently")
	}
	s := Series{Name: "s"}
	for _, e := range local {
		s.Points = append(s.Points, Point{At: e.At, Value: float64(e.End.Sub(e.At))})
	}
	if Lines([]Series{s}, ChartOptions{}) != Lines([]Series{s}, ChartOptions{}) {
		t.Error("two line charts of the same input differ")
	}
}

func TestTimelineBounds(t *testing.T) {
	// 10,000 events in one lane gather into at most maxMarks marks.
	var events []Event
	for i := range 10_000 {
		at := t0.Add(time.Duration(i) * time.Minute)
		events = append(events, Event{At: at, End: at.Add(30 * time.Second), Lane: "sessions", Label: strings.Repeat("label ", 40), Href: "/s/" + strconv.Itoa(i)})
	}
	out := Timeline(events, TimelineOptions{})
	doc := parse(t, out)
	ms := marks(doc)
	if len(ms) > maxMarks || len(ms) < maxMarks/4 {
		t.Errorf("%d marks for 10,000 events, want up to %d", len(ms), maxMarks)
	}
	// Every event is counted once by the marks' tooltips.
	total := 0
	for _, tip := range tooltips(doc) {
		count, rest, ok := strings.Cut(tip, " events: label")
		n, err := strconv.Atoi(count)
		if !ok || err != nil || !strings.Contains(rest, "UTC") {
			t.Fatalf("a gathered mark's tooltip %q does not count its events", tip)
		}
		total += n
	}
	if total != 10_000 {
		t.Errorf("gathered marks count %d events, want 10,000", total)
	}
	if len(out) > 300_000 {
		t.Errorf("output is %d bytes for 10,000 events", len(out))
	}

	// 40 lanes: 15 drawn, the rest share the 16th.
	events = nil
	for i := range 40 {
		events = append(events, Event{At: t0.Add(time.Duration(i) * time.Hour), Lane: "lane " + strconv.Itoa(i)})
	}
	doc = parse(t, Timeline(events, TimelineOptions{}))
	lanes := doc.texts("lane-label")
	if len(lanes) != maxLanes || lanes[maxLanes-1] != "25 more lanes" {
		t.Errorf("lanes %q, want %d ending in 25 more lanes", lanes, maxLanes)
	}
	if n := len(marks(doc)); n != 40 {
		t.Errorf("%d marks, want all 40 events", n)
	}

	// A megabyte of label is cut.
	huge := strings.Repeat("<b>", 1<<20/3)
	out = Timeline([]Event{{At: t0, Lane: huge, Label: huge}}, TimelineOptions{Title: huge})
	parse(t, out)
	if len(out) > 10_000 {
		t.Errorf("output is %d bytes for one event with huge labels", len(out))
	}

	// Sizes are clamped.
	for _, c := range []struct{ w, want int }{{0, 800}, {-5, 800}, {10, minSize}, {1 << 30, maxSize}} {
		doc := parse(t, Timeline([]Event{{At: t0}}, TimelineOptions{Width: c.w}))
		if got := doc.elems[0].attrs["width"]; got != strconv.Itoa(c.want) {
			t.Errorf("width %d drew %s, want %d", c.w, got, c.want)
		}
	}
}

func TestTinySpansAndValuesDrawInsideThePlot(t *testing.T) {
	far := time.Date(2026, 3, 4, 9, 0, 0, 500, time.UTC)
	cases := []struct {
		name string
		out  template.HTML
		left float64
	}{
		{"timeline 1ns", Timeline([]Event{{At: far, Label: "a"}, {At: far.Add(time.Nanosecond), Label: "b"}}, TimelineOptions{}), laneLabelWidth},
		{"timeline 300ms", Timeline([]Event{{At: t0, End: t0.Add(300 * time.Millisecond)}, {At: t0.Add(time.Millisecond)}}, TimelineOptions{}), laneLabelWidth},
		{"lines 1ns", Lines([]Series{{Points: []Point{{At: far, Value: 1}, {At: far.Add(time.Nanosecond), Value: 2}}}}, ChartOptions{}), yAxisWidth},
		{"lines tiny", Lines([]Series{series("s", "", 0, 1e-310)}, ChartOptions{}), yAxisWidth},
		{"lines denormal", Lines([]Series{series("s", "", -5e-324, 5e-324)}, ChartOptions{}), yAxisWidth},
	}
	for _, c := range cases {
		doc := parse(t, c.out)
		inert(t, doc) // every coordinate is a finite number
		marksInside(t, c.name, doc, c.left)
	}
}

// marksInside fails the test when a mark of doc starts outside the plot
// area that begins at left, or outside the chart's height.
func marksInside(t testing.TB, name string, doc svgDoc, left float64) {
	t.Helper()
	width, _ := strconv.ParseFloat(doc.elems[0].attrs["width"], 64)
	height, _ := strconv.ParseFloat(doc.elems[0].attrs["height"], 64)
	for _, m := range marks(doc) {
		x, _ := strconv.ParseFloat(m.attrs["cx"]+m.attrs["x"], 64)
		y, _ := strconv.ParseFloat(m.attrs["cy"]+m.attrs["y"], 64)
		if x < left-0.05 || x > width-marginRight+0.05 || y < 0 || y > height {
			t.Errorf("%s: mark at %g,%g outside the plot from x %g in %gx%g", name, x, y, left, width, height)
			return
		}
	}
}
