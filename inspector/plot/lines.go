package plot

import (
	"html/template"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// A Point is one value of a Series at a time.
type Point struct {
	At    time.Time
	Value float64
	// Label heads the point's tooltip.
	Label string
	// Href, when set and safe, makes the point's marker a link.
	Href string
}

// A Series is one line of a chart.
type Series struct {
	// Name is shown in the legend and tooltips.
	Name string
	// Unit follows the series' values in tooltips.
	Unit   string
	Points []Point
}

// ChartOptions shape a line chart.
type ChartOptions struct {
	// Width and Height are in pixels; zero picks 800 by 300.
	Width, Height int
	// Title is drawn above the chart and is its accessible name.
	Title string
	// Unit labels the y axis; empty takes the series' unit when they
	// share one.
	Unit string
}

const (
	// maxSeries is the most series a chart draws.
	maxSeries = 8
	// maxVertices is the most polyline vertices drawn for one series.
	maxVertices = 1000
	// maxMarkers is the most point markers drawn for one series.
	maxMarkers = 300
)

// Lines draws series as an inline SVG line chart: one polyline with a
// marker per point for each series, a y axis with 1-2-5 ticks and the
// unit, a legend, and a UTC time axis. Each marker's tooltip gives its
// Label, series, value and time; a marker with a safe Href is a link. See
// the package documentation for what is skipped and the output's bounds.
func Lines(series []Series, opt ChartOptions) template.HTML {
	label := opt.Title
	if label == "" {
		label = "Line chart"
	}
	width, height := size(opt.Width, 800), size(opt.Height, 300)
	drawn, hidden, lo, hi, vlo, vhi := chartSeries(series)
	if len(drawn) == 0 {
		return template.HTML(noData("plot-lines", width, height, label))
	}
	unit := opt.Unit
	if unit == "" {
		unit = sharedUnit(drawn)
	}

	// The legend's rows sit under the title; estimate text widths.
	top := 10.0
	if opt.Title != "" {
		top = 30
	}
	const left, right, bottom = yAxisWidth, marginRight, marginBottom
	// The legend takes at most the rows that leave the plot half the
	// chart's height.
	maxRows := max(int((float64(height)/2-top-20)/18), 1)
	items := legend(drawn, hidden, unit, left, float64(width)-right, maxRows)
	rows := 1
	if n := len(items); n > 0 {
		rows = items[n-1].row + 1
	}
	legendY := top + 6
	top += float64(rows)*18 + 14 // legend rows, then room for the unit
	plotW := max(float64(width)-left-right, 1)
	plotH := max(float64(height)-top-bottom, 1)

	sc, lo, hi := newTimeScale(lo, hi, left, plotW)
	if vlo > 0 {
		vlo = 0
	}
	from, to, step := valueTicks(vlo, vhi, max(int(plotH/40), 2))
	y := func(v float64) float64 { return top + plotH - (v-from)/(to-from)*plotH }

	var w svgWriter
	w.open("plot-lines", width, height, label)
	w.title(opt.Title, 4)

	// Legend.
	w.raw(`<g class="legend">`)
	for _, it := range items {
		ly := legendY + float64(it.row)*18
		if it.series >= 0 {
			w.raw(`<rect class="series-` + strconv.Itoa(it.series) + `" x="`)
			w.num(it.x)
			w.raw(`" y="`)
			w.num(ly + 1)
			w.raw(`" width="12" height="4" fill="` + colour(it.series) + `"/>`)
		}
		w.raw(`<text class="legend-item" x="`)
		w.num(it.x + it.indent)
		w.raw(`" y="`)
		w.num(ly + 3)
		w.raw(`" dominant-baseline="middle">`)
		w.text(it.text)
		w.raw("</text>")
	}
	w.raw("</g>")

	// Y axis: grid lines, tick labels and unit.
	w.raw(`<g class="axis y-axis">`)
	for i := 0; i <= 100; i++ {
		v := from + float64(i)*step
		if v > to+step*1e-6 {
			break
		}
		ty := y(v)
		w.line("grid", left-4, ty, left+plotW, ty, gridColour)
		w.raw(`<text class="tick" x="`)
		w.num(left - 7)
		w.raw(`" y="`)
		w.num(ty)
		w.raw(`" text-anchor="end" dominant-baseline="middle" font-size="11">`)
		w.text(formatValue(v, step))
		w.raw("</text>")
	}
	if unit != "" {
		w.raw(`<text class="unit" x="`)
		w.num(left - 7)
		w.raw(`" y="`)
		w.num(top - 8)
		w.raw(`" text-anchor="end" font-size="11">`)
		w.text(unit)
		w.raw("</text>")
	}
	w.raw("</g>")
	timeAxis(&w, lo, hi, sc, top, top+plotH)

	for i, s := range drawn {
		drawSeries(&w, s, i, sc, y)
	}
	w.close()
	return template.HTML(w.String())
}

// chartSeries keeps the drawable points of the first maxSeries series
// that have any, sorted by time, and returns how many series with points
// were left out, the time span and the value range.
func chartSeries(series []Series) (drawn []Series, hidden int, lo, hi time.Time, vlo, vhi float64) {
	vlo, vhi = math.Inf(1), math.Inf(-1)
	for _, s := range series {
		if len(drawn) == maxSeries {
			if slices.ContainsFunc(s.Points, drawablePoint) {
				hidden++
			}
			continue
		}
		pts := s.Points
		if !slices.IsSortedFunc(pts, byTime) || slices.ContainsFunc(pts, undrawablePoint) {
			// Copy, never change the caller's slice.
			pts = make([]Point, 0, len(s.Points))
			for _, p := range s.Points {
				if drawablePoint(p) {
					pts = append(pts, p)
				}
			}
			slices.SortStableFunc(pts, byTime)
		}
		if len(pts) == 0 {
			continue
		}
		for _, p := range pts {
			vlo, vhi = min(vlo, p.Value), max(vhi, p.Value)
		}
		if first := pts[0].At.UTC(); lo.IsZero() || first.Before(lo) {
			lo = first
		}
		if last := pts[len(pts)-1].At.UTC(); hi.IsZero() || last.After(hi) {
			hi = last
		}
		s.Points = pts
		drawn = append(drawn, s)
	}
	return drawn, hidden, lo, hi, vlo, vhi
}

// byTime orders points by time.
func byTime(a, b Point) int { return a.At.Compare(b.At) }

// undrawablePoint is !drawablePoint(p).
func undrawablePoint(p Point) bool { return !drawablePoint(p) }

// drawablePoint reports whether p can be placed: a drawable time and a
// finite value within ±1e300.
func drawablePoint(p Point) bool {
	return drawable(p.At) && !math.IsNaN(p.Value) && math.Abs(p.Value) <= 1e300
}

// sharedUnit is the unit every series has, or "".
func sharedUnit(series []Series) string {
	u := series[0].Unit
	for _, s := range series[1:] {
		if s.Unit != u {
			return ""
		}
	}
	return u
}

// A legendItem is one entry of a chart's legend.
type legendItem struct {
	series int // index of the series, -1 for the note of hidden ones
	text   string
	x      float64
	indent float64
	row    int
}

// legend lays out one entry per series, naming its unit when the axis
// does not, and notes of hidden series, in at most maxRows rows between
// left and right. When the entries do not fit, the last ones give way to
// a note of how many are not listed (their tooltips still name them).
func legend(series []Series, hidden int, axisUnit string, left, right float64, maxRows int) []legendItem {
	names := make([]string, len(series))
	for i, s := range series {
		names[i] = short(s.Name, 40)
		if names[i] == "" {
			names[i] = "series " + strconv.Itoa(i+1)
		}
		if s.Unit != "" && s.Unit != axisUnit {
			names[i] += " (" + short(s.Unit, 20) + ")"
		}
	}
	var items []legendItem
	for n := len(series); n >= 0; n-- {
		items = items[:0]
		x, row := left, 0
		place := func(i int, text string, indent float64) {
			w := indent + float64(utf8.RuneCountInString(text))*6.5 + 16
			if x > left && x+w > right {
				x, row = left, row+1
			}
			items = append(items, legendItem{series: i, text: text, x: x, indent: indent, row: row})
			x += w
		}
		for i, name := range names[:n] {
			place(i, name, 16)
		}
		if unlisted := len(series) - n; unlisted > 0 {
			place(-1, "+"+strconv.Itoa(unlisted)+" more", 0)
		}
		if hidden > 0 {
			place(-1, "+"+strconv.Itoa(hidden)+" more series not shown", 0)
		}
		if row < maxRows {
			break
		}
	}
	return items
}

// drawSeries draws one series' polyline and markers.
func drawSeries(w *svgWriter, s Series, i int, sc timeScale, y func(float64) float64) {
	c := colour(i)
	w.raw(`<g class="series series-` + strconv.Itoa(i) + `">`)
	w.raw(`<polyline fill="none" stroke="` + c + `" stroke-width="1.5" stroke-linejoin="round" points="`)
	for j, p := range vertices(s.Points, sc) {
		if j > 0 {
			w.raw(" ")
		}
		w.num(sc.x(p.At))
		w.raw(",")
		w.num(y(p.Value))
	}
	w.raw(`"/>`)
	pts, peaks := s.Points, false
	if len(pts) > maxMarkers {
		pts, peaks = columnPeaks(pts, sc, maxMarkers), true
	}
	for _, p := range pts {
		href, link := safeHref(p.Href)
		if link {
			w.raw(`<a href="`)
			w.text(href)
			w.raw(`">`)
		}
		w.raw(`<circle class="mark" cx="`)
		w.num(sc.x(p.At))
		w.raw(`" cy="`)
		w.num(y(p.Value))
		w.raw(`" r="3" fill="` + c + `" stroke="#fff" stroke-width="1"><title>`)
		if p.Label != "" {
			w.text(p.Label)
			w.raw("\n")
		}
		if s.Name != "" {
			w.text(s.Name)
			w.raw(": ")
		}
		w.text(tipValue(p.Value))
		if s.Unit != "" {
			w.raw(" ")
			w.text(s.Unit)
		}
		w.raw(", ")
		w.text(p.At.UTC().Format("2006-01-02 15:04:05"))
		w.raw(" UTC")
		if peaks {
			w.raw(" (highest nearby)")
		}
		w.raw("</title></circle>")
		if link {
			w.raw("</a>")
		}
	}
	w.raw("</g>")
}

// vertices are the points of a polyline through pts: all of them when
// they are at most maxVertices, else the lowest and highest of each of
// maxVertices/2 columns, in time order.
func vertices(pts []Point, sc timeScale) []Point {
	if len(pts) <= maxVertices {
		return pts
	}
	cols := maxVertices / 2
	out := make([]Point, 0, maxVertices)
	for _, col := range columns(pts, sc, cols) {
		lo, hi := col[0], col[0]
		li, hj := 0, 0
		for k, p := range col {
			if p.Value < lo.Value {
				lo, li = p, k
			}
			if p.Value > hi.Value {
				hi, hj = p, k
			}
		}
		switch {
		case li == hj:
			out = append(out, lo)
		case li < hj:
			out = append(out, lo, hi)
		default:
			out = append(out, hi, lo)
		}
	}
	return out
}

// columnPeaks is the highest point of each of n columns.
func columnPeaks(pts []Point, sc timeScale, n int) []Point {
	out := make([]Point, 0, n)
	for _, col := range columns(pts, sc, n) {
		hi := col[0]
		for _, p := range col[1:] {
			if p.Value > hi.Value {
				hi = p
			}
		}
		out = append(out, hi)
	}
	return out
}

// columns splits time-sorted pts into the non-empty ones of n equal
// columns of the plot.
func columns(pts []Point, sc timeScale, n int) [][]Point {
	var out [][]Point
	start, cur := 0, -1
	for k, p := range pts {
		c := int((sc.x(p.At) - sc.left) / sc.width * float64(n))
		c = min(max(c, 0), n-1)
		if c != cur {
			if k > start {
				out = append(out, pts[start:k])
			}
			start, cur = k, c
		}
	}
	return append(out, pts[start:])
}

// tipValue formats a value for a tooltip.
func tipValue(v float64) string {
	a := math.Abs(v)
	if a >= 1e15 || (a < 1e-4 && a != 0) {
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
}
