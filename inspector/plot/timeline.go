package plot

import (
	"html/template"
	"slices"
	"strconv"
	"strings"
	"time"
)

// An Event is one mark on a timeline: an interval from At to End (a
// session), or a point at At when End is zero (an insight).
type Event struct {
	At, End time.Time // End zero: a point
	// Lane names the row the event is drawn in.
	Lane string
	// Label is the mark's tooltip.
	Label string
	// Href, when set and safe, makes the mark a link.
	Href string
}

// TimelineOptions shape a Timeline.
type TimelineOptions struct {
	// Width and Height are in pixels; zero picks 800 wide and a height
	// that gives each lane 28 pixels.
	Width, Height int
	// Title is drawn above the chart and is its accessible name.
	Title string
}

const (
	// maxLanes is the most lanes a timeline draws; later lanes share the
	// last one.
	maxLanes = 16
	// maxMarks is the most marks drawn in one lane.
	maxMarks = 400
	// laneHeight is a lane's height when the options leave it open.
	laneHeight = 28
	// laneLabelChars is the most characters of a lane's name drawn
	// beside it (all of it is in its tooltip).
	laneLabelChars = 16
)

// A lane is one row of a timeline.
type lane struct {
	name   string
	events []int // indices of the lane's events, in input order
}

// Timeline draws events as an inline SVG timeline, one lane per
// Event.Lane value in the order lanes first appear, with a UTC time axis
// below. Each mark's tooltip is its Label and time; a mark with a safe
// Href is a link. See the package documentation for what is skipped and
// the output's bounds.
func Timeline(events []Event, opt TimelineOptions) template.HTML {
	events, lanes, lo, hi := timelineLanes(events)
	label := opt.Title
	if label == "" {
		label = "Timeline"
	}
	width := size(opt.Width, 800)
	if len(lanes) == 0 {
		return template.HTML(noData("plot-timeline", width, size(opt.Height, 120), label))
	}

	top := 10.0
	if opt.Title != "" {
		top = 30
	}
	const bottom, left, right = marginBottom, laneLabelWidth, marginRight
	height := size(opt.Height, int(top+bottom)+laneHeight*len(lanes))
	laneH := (float64(height) - top - bottom) / float64(len(lanes))
	laneH = max(laneH, 1)
	plotW := max(float64(width)-left-right, 1)

	sc, lo, hi := newTimeScale(lo, hi, left, plotW)

	var w svgWriter
	w.open("plot-timeline", width, height, label)
	w.title(opt.Title, 4)

	// Lanes, their names, then the time axis's grid under the marks.
	for i, ln := range lanes {
		y := top + float64(i)*laneH
		fill := "#f7f7f7"
		if i%2 == 1 {
			fill = "#ffffff"
		}
		w.raw(`<rect class="lane" x="`)
		w.num(left)
		w.raw(`" y="`)
		w.num(y)
		w.raw(`" width="`)
		w.num(plotW)
		w.raw(`" height="`)
		w.num(laneH)
		w.raw(`" fill="` + fill + `"/>`)
		w.raw(`<text class="lane-label" x="`)
		w.num(left - 6)
		w.raw(`" y="`)
		w.num(y + laneH/2)
		w.raw(`" text-anchor="end" dominant-baseline="middle"><title>`)
		w.text(ln.name)
		w.raw("</title>")
		w.text(short(ln.name, laneLabelChars))
		w.raw("</text>")
	}
	axisY := top + float64(len(lanes))*laneH
	timeAxis(&w, lo, hi, sc, top, axisY)
	for i, ln := range lanes {
		drawLane(&w, events, ln, i, sc, top+float64(i)*laneH, laneH)
	}
	w.close()
	return template.HTML(w.String())
}

// timelineLanes keeps the drawable events, in UTC with a bad End
// cleared, groups them by lane, merging lanes beyond maxLanes-1 into a
// last one, and returns the time span they cover.
func timelineLanes(in []Event) (events []Event, lanes []lane, lo, hi time.Time) {
	events = make([]Event, 0, len(in))
	index := map[string]int{}
	for _, e := range in {
		if !drawable(e.At) {
			continue
		}
		e.At = e.At.UTC()
		end := e.At
		if !drawable(e.End) || e.End.Before(e.At) {
			e.End = time.Time{}
		} else {
			e.End = e.End.UTC()
			end = e.End
		}
		if lo.IsZero() || e.At.Before(lo) {
			lo = e.At
		}
		if hi.IsZero() || end.After(hi) {
			hi = end
		}
		i, ok := index[e.Lane]
		if !ok {
			i = len(lanes)
			index[e.Lane] = i
			lanes = append(lanes, lane{name: e.Lane})
		}
		lanes[i].events = append(lanes[i].events, len(events))
		events = append(events, e)
	}
	if len(lanes) > maxLanes {
		rest := lane{name: strconv.Itoa(len(lanes)-maxLanes+1) + " more lanes"}
		for _, ln := range lanes[maxLanes-1:] {
			rest.events = append(rest.events, ln.events...)
		}
		slices.Sort(rest.events)
		lanes = append(lanes[:maxLanes-1], rest)
	}
	return events, lanes, lo, hi
}

// drawable reports whether t can be placed on an axis: not zero, within
// the years 1 to 9999.
func drawable(t time.Time) bool {
	// The zero time is the first instant of the year 1.
	return t.After(time.Time{}) && t.Unix() < year10000
}

// year10000 is the first second of the year 10000 UTC, in Unix seconds.
const year10000 = 253402300800

// timeAxis draws the grid, ticks, labels and range caption of a time axis
// along the bottom edge axisY of a plot that starts at top.
func timeAxis(w *svgWriter, lo, hi time.Time, sc timeScale, top, axisY float64) {
	left, plotW := sc.left, sc.width
	w.raw(`<g class="axis">`)
	for _, t := range timeTicks(lo, hi, int(plotW/80)) {
		tx := sc.x(t.at)
		w.line("grid", tx, top, tx, axisY+4, gridColour)
		w.raw(`<text class="tick" x="`)
		w.num(tx)
		w.raw(`" y="`)
		w.num(axisY + 16)
		w.raw(`" text-anchor="middle" font-size="11">`)
		w.text(t.label)
		w.raw("</text>")
	}
	w.line("", left, axisY, left+plotW, axisY, axisColour)
	w.raw(`<text class="range" x="`)
	w.num(left + plotW)
	w.raw(`" y="`)
	w.num(axisY + 34)
	w.raw(`" text-anchor="end" font-size="11" fill="` + axisColour + `">`)
	w.text(rangeText(lo, hi))
	w.raw("</text></g>")
}

// rangeText names the span lo..hi in UTC, as precisely as it needs.
func rangeText(lo, hi time.Time) string {
	layout := "2006-01-02 15:04"
	if hi.Sub(lo) < 10*time.Minute {
		layout = "2006-01-02 15:04:05"
	}
	return lo.Format(layout) + " – " + hi.Format(layout) + " UTC"
}

// spanText is an event's time for its tooltip.
func spanText(e Event) string {
	if e.End.IsZero() {
		return e.At.Format("2006-01-02 15:04:05") + " UTC"
	}
	layout := "2006-01-02 15:04:05"
	endLayout := layout
	if e.End.Year() == e.At.Year() && e.End.YearDay() == e.At.YearDay() {
		endLayout = "15:04:05"
	}
	return e.At.Format(layout) + " – " + e.End.Format(endLayout) + " UTC (" + e.End.Sub(e.At).Round(time.Second).String() + ")"
}

// drawLane draws one lane's marks; a lane with more than maxMarks events
// is drawn as one mark per column of a few pixels, gathering the events
// that start in it.
func drawLane(w *svgWriter, events []Event, ln lane, i int, sc timeScale, y, laneH float64) {
	fill := colour(i)
	w.raw(`<g class="marks lane-` + strconv.Itoa(i) + `">`)
	defer w.raw("</g>")
	if len(ln.events) <= maxMarks {
		for _, j := range ln.events {
			drawMark(w, events[j], sc, y, laneH, fill, false)
		}
		return
	}
	cols := make([]column, max(min(maxMarks, int(sc.width/3)), 1))
	for _, j := range ln.events {
		c := int((sc.x(events[j].At) - sc.left) / sc.width * float64(len(cols)))
		cols[min(max(c, 0), len(cols)-1)].add(events, j)
	}
	for _, c := range cols {
		switch c.n {
		case 0:
		case 1:
			drawMark(w, events[c.first[0]], sc, y, laneH, fill, false)
		default:
			drawMark(w, c.gathered(events), sc, y, laneH, fill, true)
		}
	}
}

// A column gathers the events of a lane that start in the same few
// pixels.
type column struct {
	n       int
	at, end time.Time
	first   [3]int // the earliest events, earliest first
}

// add counts events[j] in the column.
func (c *column) add(events []Event, j int) {
	e := events[j]
	end := e.At
	if e.End.After(end) {
		end = e.End
	}
	if c.n == 0 || e.At.Before(c.at) {
		c.at = e.At
	}
	if c.n == 0 || end.After(c.end) {
		c.end = end
	}
	// Insert j among the earliest, after those with the same time.
	k := min(c.n, len(c.first))
	for k > 0 && e.At.Before(events[c.first[k-1]].At) {
		if k < len(c.first) {
			c.first[k] = c.first[k-1]
		}
		k--
	}
	if k < len(c.first) {
		c.first[k] = j
	}
	c.n++
}

// gathered is one event standing for the column: it spans the column's
// events, links nowhere, and its label counts them and names the first.
func (c *column) gathered(events []Event) Event {
	var b strings.Builder
	b.WriteString(strconv.Itoa(c.n))
	b.WriteString(" events")
	for k, j := range c.first[:min(c.n, len(c.first))] {
		if k == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(short(events[j].Label, 50))
	}
	if c.n > len(c.first) {
		b.WriteString("; …")
	}
	return Event{At: c.at, End: c.end, Label: b.String()}
}

// drawMark draws one event: a bar for an interval, a circle for a point.
// A gathered mark is a bar over its group's span, drawn darker.
func drawMark(w *svgWriter, e Event, sc timeScale, y, laneH float64, fill string, gathered bool) {
	href, link := safeHref(e.Href)
	if link {
		w.raw(`<a href="`)
		w.text(href)
		w.raw(`">`)
	}
	class := "mark"
	if gathered {
		class = "mark gathered"
	}
	x0 := sc.x(e.At)
	switch {
	case e.End.IsZero():
		r := min(4, laneH/2)
		w.raw(`<circle class="` + class + ` point" cx="`)
		w.num(x0)
		w.raw(`" cy="`)
		w.num(y + laneH/2)
		w.raw(`" r="`)
		w.num(r)
		w.raw(`" fill="` + fill + `" stroke="#fff" stroke-width="1">`)
	default:
		h := laneH * 0.6
		w.raw(`<rect class="` + class + ` interval" x="`)
		w.num(x0)
		w.raw(`" y="`)
		w.num(y + (laneH-h)/2)
		w.raw(`" width="`)
		w.num(max(sc.x(e.End)-x0, 2))
		w.raw(`" height="`)
		w.num(h)
		w.raw(`" rx="2" fill="` + fill + `"`)
		if gathered {
			w.raw(` fill-opacity="0.6"`)
		}
		w.raw(`>`)
	}
	w.raw("<title>")
	if e.Label != "" {
		w.text(e.Label)
		w.raw("\n")
	}
	w.text(spanText(e))
	w.raw("</title>")
	if e.End.IsZero() {
		w.raw("</circle>")
	} else {
		w.raw("</rect>")
	}
	if link {
		w.raw("</a>")
	}
}

// A timeScale places times along a plot's x axis.
type timeScale struct {
	lo          time.Time
	span        float64 // seconds, at least minSpan
	left, width float64 // the plot's left edge and width in pixels
}

// minSpan is the shortest span a time axis shows; a shorter one (one
// event, or all at one instant) is widened to widenedSpan around its
// middle.
const (
	minSpan     = time.Second
	widenedSpan = time.Hour
)

// newTimeScale maps lo..hi onto left..left+width, widening a span shorter
// than minSpan, and returns the span it shows.
func newTimeScale(lo, hi time.Time, left, width float64) (timeScale, time.Time, time.Time) {
	if hi.Sub(lo) < minSpan {
		mid := lo.Add(hi.Sub(lo) / 2)
		lo, hi = mid.Add(-widenedSpan/2), mid.Add(widenedSpan/2)
	}
	return timeScale{lo: lo, span: seconds(hi, lo), left: left, width: width}, lo, hi
}

// x is t's position.
func (s timeScale) x(t time.Time) float64 { return s.left + seconds(t, s.lo)/s.span*s.width }

// seconds is a-b in seconds, exact to the nanosecond for spans that fit
// in a time.Duration and without overflow for any span of the years 1 to
// 9999.
func seconds(a, b time.Time) float64 {
	return float64(a.Unix()-b.Unix()) + float64(a.Nanosecond()-b.Nanosecond())/1e9
}
