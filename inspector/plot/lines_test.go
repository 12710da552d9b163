package plot

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestNiceStep(t *testing.T) {
	cases := []struct{ raw, want float64 }{
		{0.13, 0.2}, {1, 1}, {1.01, 2}, {2.1, 5}, {7, 10}, {0.003, 0.005},
		{1e6, 1e6}, {4.9e6, 5e6}, {0, 1}, {-3, 1}, {math.Inf(1), 1}, {math.NaN(), 1},
	}
	for _, c := range cases {
		if got := niceStep(c.raw, false); math.Abs(got-c.want) > c.want*1e-12 {
			t.Errorf("niceStep(%g) = %g, want %g", c.raw, got, c.want)
		}
	}
	if got := niceStep(0.3, true); got != 1 {
		t.Errorf("integer niceStep(0.3) = %g, want 1", got)
	}
}

func TestValueTicks(t *testing.T) {
	cases := []struct {
		lo, hi         float64
		target         int
		from, to, step float64
	}{
		{0, 97, 5, 0, 100, 20},
		{0, 0, 5, 0, 1, 0.2},
		{120, 120, 4, 50, 200, 50},
		{-120, -120, 4, -200, -50, 50},
		{-3, 7, 5, -4, 8, 2},
		{0, 41234, 5, 0, 50000, 10000},
		{1, 1 + 1e-15, 5, 0.4, 1.6, 0.2},
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	for _, c := range cases {
		from, to, step := valueTicks(c.lo, c.hi, c.target)
		if !near(from, c.from) || !near(to, c.to) || !near(step, c.step) {
			t.Errorf("valueTicks(%g, %g, %d) = %g..%g by %g, want %g..%g by %g",
				c.lo, c.hi, c.target, from, to, step, c.from, c.to, c.step)
		}
	}
}

func TestFormatValue(t *testing.T) {
	cases := []struct {
		v, step float64
		want    string
	}{
		{0, 1, "0"}, {3, 1, "3"}, {-40, 20, "-40"}, {0.25, 0.05, "0.25"}, {0.6, 0.2, "0.6"},
		{0.0003, 0.0001, "0.0003"}, {0.00003, 0.00001, "3e-05"}, {1250, 50, "1250"}, {1500, 500, "1.5k"},
		{20000, 5000, "20k"}, {2e6, 1e6, "2M"}, {2.5e9, 5e8, "2.5G"}, {4e12, 1e12, "4T"},
		{3e20, 1e20, "3e+20"}, {3e-9, 1e-9, "3e-09"}, {2e-311, 1e-311, "2e-311"}, {0.0000015, 0.0000005, "1.5e-06"},
	}
	for _, c := range cases {
		if got := formatValue(c.v, c.step); got != c.want {
			t.Errorf("formatValue(%g, %g) = %q, want %q", c.v, c.step, got, c.want)
		}
	}
}

// series is a series named name of the given values, a minute apart from t0.
func series(name, unit string, values ...float64) Series {
	s := Series{Name: name, Unit: unit}
	for i, v := range values {
		s.Points = append(s.Points, Point{At: t0.Add(time.Duration(i) * time.Minute), Value: v})
	}
	return s
}

// yTicks are the y axis's tick labels, bottom first.
func yTicks(doc svgDoc) []string {
	var out []string
	for _, e := range doc.all("text") {
		if e.hasClass("tick") && len(e.path) > 1 && e.path[len(e.path)-1] == "g" && e.attrs["text-anchor"] == "end" {
			out = append(out, e.text)
		}
	}
	return out
}

func TestLinesYAxis(t *testing.T) {
	doc := parse(t, Lines([]Series{series("search", "ms", 3, 50, 97)}, ChartOptions{}))
	if got, want := strings.Join(yTicks(doc), " "), "0 20 40 60 80 100"; got != want {
		t.Errorf("y ticks %q, want %q", got, want)
	}
	if got := doc.texts("unit"); len(got) != 1 || got[0] != "ms" {
		t.Errorf("unit %q, want the series' unit ms", got)
	}
	doc = parse(t, Lines([]Series{series("tokens in", "tokens", 1200, 41234)}, ChartOptions{Unit: "tok"}))
	if got, want := strings.Join(yTicks(doc), " "), "0 10k 20k 30k 40k 50k"; got != want {
		t.Errorf("y ticks %q, want %q", got, want)
	}
	if got := doc.texts("unit"); len(got) != 1 || got[0] != "tok" {
		t.Errorf("unit %q, want the option's tok", got)
	}
	doc = parse(t, Lines([]Series{series("a", "ms", 1), series("b", "tokens", 2), series("c", "", 3)}, ChartOptions{}))
	if got := doc.texts("unit"); len(got) != 0 {
		t.Errorf("unit %q drawn for series of different units", got)
	}
	if got, want := doc.texts("legend-item"), []string{"a (ms)", "b (tokens)", "c"}; !slices.Equal(got, want) {
		t.Errorf("legend %q, want %q: units named when the axis has none", got, want)
	}
}

func TestLinesNegativeValuesKeepTheirRange(t *testing.T) {
	doc := parse(t, Lines([]Series{series("delta", "", -30, -12, -25)}, ChartOptions{}))
	if got, want := strings.Join(yTicks(doc), " "), "-30 -25 -20 -15 -10"; got != want {
		t.Errorf("y ticks %q, want %q", got, want)
	}
}

func TestLinesSkipsWhatCannotBeDrawn(t *testing.T) {
	s := series("s", "", 1, math.NaN(), math.Inf(1), math.Inf(-1), 2, 1e301)
	s.Points = append(s.Points, Point{Value: 7}, Point{At: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Value: 8})
	out := Lines([]Series{s}, ChartOptions{})
	doc := parse(t, out)
	if n := len(doc.all("circle")); n != 2 {
		t.Errorf("%d markers, want the 2 finite points", n)
	}
	if got := doc.all("polyline")[0].attrs["points"]; len(strings.Fields(got)) != 2 {
		t.Errorf("polyline points %q, want 2", got)
	}
	for _, bad := range []string{"NaN", "Inf", "e+"} {
		if strings.Contains(string(out), bad) {
			t.Errorf("output holds %q", bad)
		}
	}
	for name, in := range map[string][]Series{
		"nil":             nil,
		"no points":       {{Name: "empty"}},
		"only non-finite": {series("s", "", math.NaN(), math.Inf(1))},
	} {
		doc := parse(t, Lines(in, ChartOptions{Title: "Latency"}))
		if got := doc.texts("no-data"); len(got) != 1 || got[0] != "no data" {
			t.Errorf("%s: no-data text %q", name, got)
		}
		if doc.elems[0].attrs["aria-label"] != "Latency" || doc.elems[0].attrs["role"] != "img" {
			t.Errorf("%s: root attributes %v", name, doc.elems[0].attrs)
		}
	}
}

func TestLinesEqualValuesAndOnePoint(t *testing.T) {
	cases := []struct {
		name   string
		values []float64
		ticks  string
	}{
		{"one point", []float64{5}, "0 1 2 3 4 5"},
		{"all equal", []float64{5, 5, 5}, "0 1 2 3 4 5"},
		{"all zero", []float64{0, 0}, "0 0.2 0.4 0.6 0.8 1.0"},
		{"all equal negative", []float64{-4, -4}, "-6 -5 -4 -3 -2"},
	}
	for _, c := range cases {
		doc := parse(t, Lines([]Series{series("s", "", c.values...)}, ChartOptions{}))
		if got := strings.Join(yTicks(doc), " "); got != c.ticks {
			t.Errorf("%s: y ticks %q, want %q", c.name, got, c.ticks)
		}
		if n := len(doc.all("circle")); n != len(c.values) {
			t.Errorf("%s: %d markers, want %d", c.name, n, len(c.values))
		}
	}
	// One point sits in the middle of the time axis.
	doc := parse(t, Lines([]Series{series("s", "", 5)}, ChartOptions{Width: 400}))
	cx, _ := strconv.ParseFloat(doc.all("circle")[0].attrs["cx"], 64)
	if mid := yAxisWidth + (400-yAxisWidth-marginRight)/2; math.Abs(cx-mid) > 0.1 {
		t.Errorf("one point at x %g, want the middle %g", cx, mid)
	}
}

func TestLinesTooltipsAndLinks(t *testing.T) {
	s := Series{Name: "reflect", Unit: "ms", Points: []Point{
		{At: t0, Value: 812.34567, Label: "update 7", Href: "/inspect/updates/7"},
	}}
	doc := parse(t, Lines([]Series{s}, ChartOptions{}))
	circle := doc.all("circle")[0]
	if got := circle.path[len(circle.path)-1]; got != "a" {
		t.Errorf("marker's parent is <%s>, want <a>", got)
	}
	var tip string
	for _, e := range doc.all("title") {
		if e.path[len(e.path)-1] == "circle" {
			tip = e.text
		}
	}
	if want := "update 7\nreflect: 812.346 ms, 2026-03-04 09:00:00 UTC"; tip != want {
		t.Errorf("tooltip %q, want %q", tip, want)
	}
}

func TestLinesBounds(t *testing.T) {
	var many []Series
	for i := range 12 {
		many = append(many, series("s"+strconv.Itoa(i), "", float64(i)))
	}
	doc := parse(t, Lines(many, ChartOptions{}))
	if n := len(doc.all("polyline")); n != maxSeries {
		t.Errorf("%d series drawn, want %d", n, maxSeries)
	}
	if got := doc.all("text"); !strings.Contains(joinText(got), "+4 more series not shown") {
		t.Errorf("legend does not say 4 series are not shown")
	}

	// 100,000 points with one spike: bounded vertices and markers, and
	// the spike is still drawn.
	big := Series{Name: "tokens"}
	for i := range 100_000 {
		v := float64(100 + i%7)
		if i == 61_234 {
			v = 5000
		}
		big.Points = append(big.Points, Point{At: t0.Add(time.Duration(i) * time.Second), Value: v, Label: strings.Repeat("x", 100)})
	}
	out := Lines([]Series{big}, ChartOptions{})
	doc = parse(t, out)
	vs := strings.Fields(doc.all("polyline")[0].attrs["points"])
	if len(vs) > maxVertices {
		t.Errorf("%d polyline vertices, want at most %d", len(vs), maxVertices)
	}
	if n := len(doc.all("circle")); n > maxMarkers || n < maxMarkers/2 {
		t.Errorf("%d markers, want up to %d", n, maxMarkers)
	}
	top := math.Inf(1)
	for _, v := range vs {
		y, _ := strconv.ParseFloat(v[strings.Index(v, ",")+1:], 64)
		top = min(top, y)
	}
	var spike bool
	for _, c := range doc.all("circle") {
		if y, _ := strconv.ParseFloat(c.attrs["cy"], 64); y == top {
			spike = true
		}
	}
	if !spike {
		t.Errorf("no marker at the spike's height %g", top)
	}
	if len(out) > 200_000 {
		t.Errorf("output is %d bytes for 100,000 points", len(out))
	}
}

// joinText is the text of elems, space-separated.
func joinText(elems []elem) string {
	var b strings.Builder
	for _, e := range elems {
		b.WriteString(e.text)
		b.WriteString(" ")
	}
	return b.String()
}

func TestLinesLegendLeavesRoomForThePlot(t *testing.T) {
	var many []Series
	for i := range 10 {
		many = append(many, series(strings.Repeat("long series name ", 3)+strconv.Itoa(i), "ms", float64(i), float64(2*i)))
	}
	doc := parse(t, Lines(many, ChartOptions{Width: 200, Height: 200, Title: "Latency"}))
	marksInside(t, "narrow", doc, yAxisWidth)
	items := doc.texts("legend-item")
	if len(items) < 2 || !strings.HasSuffix(items[len(items)-2], " more") || items[len(items)-1] != "+2 more series not shown" {
		t.Errorf("legend %q, want some series, a note of the unlisted ones and of the 2 not drawn", items)
	}
}

func TestLinesLeavesTheCallersPointsAlone(t *testing.T) {
	tz := time.FixedZone("UTC+2", 2*3600)
	pts := []Point{{At: t0.Add(time.Hour).In(tz), Value: 2}, {At: t0, Value: math.NaN()}, {At: t0.In(tz), Value: 1}}
	before := slices.Clone(pts)
	doc := parse(t, Lines([]Series{{Name: "s", Points: pts}}, ChartOptions{}))
	for i := range pts {
		if pts[i].At != before[i].At || !(pts[i].Value == before[i].Value || math.IsNaN(before[i].Value)) {
			t.Errorf("point %d changed from %v to %v", i, before[i], pts[i])
		}
	}
	if got := strings.Join(tooltips(doc), "|"); got != "s: 1, 2026-03-04 09:00:00 UTC|s: 2, 2026-03-04 10:00:00 UTC" {
		t.Errorf("tooltips %q, want the two points in time order, in UTC", got)
	}
}
