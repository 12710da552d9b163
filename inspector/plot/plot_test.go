package plot

import (
	"encoding/xml"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// An svgDoc is what a test reads back from a chart: its elements in
// document order, with their attributes and direct text.
type svgDoc struct {
	elems []elem
}

// An elem is one element of a chart.
type elem struct {
	name  string
	attrs map[string]string
	text  string   // the element's own character data
	path  []string // the names of its ancestors, root first
}

// parse reads out as XML, failing the test unless it is one well-formed
// <svg> element.
func parse(t testing.TB, out template.HTML) svgDoc {
	t.Helper()
	doc, err := decode(string(out))
	if err != nil {
		t.Fatalf("not well-formed: %v\n%s", err, short(string(out), 2000))
	}
	return doc
}

// decode parses s strictly as one XML element, the chart.
func decode(s string) (svgDoc, error) {
	d := xml.NewDecoder(strings.NewReader(s))
	d.Strict = true
	var doc svgDoc
	var stack []int
	roots := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return doc, err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if len(stack) == 0 {
				roots++
				if roots > 1 || tok.Name.Local != "svg" || tok.Name.Space != "http://www.w3.org/2000/svg" {
					return doc, fmt.Errorf("root element %d is %v", roots, tok.Name)
				}
			}
			e := elem{name: tok.Name.Local, attrs: map[string]string{}}
			for _, i := range stack {
				e.path = append(e.path, doc.elems[i].name)
			}
			for _, a := range tok.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			doc.elems = append(doc.elems, e)
			stack = append(stack, len(doc.elems)-1)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) == 0 {
				if strings.TrimSpace(string(tok)) != "" {
					return doc, fmt.Errorf("text outside the root: %q", tok)
				}
				continue
			}
			doc.elems[stack[len(stack)-1]].text += string(tok)
		case xml.ProcInst, xml.Directive:
			return doc, fmt.Errorf("unexpected %T", tok)
		}
	}
	if roots != 1 {
		return doc, fmt.Errorf("%d root elements", roots)
	}
	return doc, nil
}

// all are the elements named name.
func (d svgDoc) all(name string) []elem {
	var out []elem
	for _, e := range d.elems {
		if e.name == name {
			out = append(out, e)
		}
	}
	return out
}

// hasClass reports whether e's class list holds c.
func (e elem) hasClass(c string) bool {
	return slices.Contains(strings.Fields(e.attrs["class"]), c)
}

// texts are the text of the <text> elements with class c, in order.
func (d svgDoc) texts(class string) []string {
	var out []string
	for _, e := range d.all("text") {
		if e.hasClass(class) {
			out = append(out, e.text)
		}
	}
	return out
}

// inert fails the test when the chart holds an element or attribute
// that could run script or load anything: only the drawing elements this
// package writes, no event-handler attributes, no unsafe links.
func inert(t testing.TB, doc svgDoc) {
	t.Helper()
	allowed := []string{"svg", "title", "g", "rect", "circle", "line", "polyline", "text", "a"}
	for _, e := range doc.elems {
		if !slices.Contains(allowed, e.name) {
			t.Errorf("element <%s> in the output", e.name)
		}
		for k, v := range e.attrs {
			if strings.HasPrefix(strings.ToLower(k), "on") || k == "style" {
				t.Errorf("attribute %s=%q on <%s>", k, v, e.name)
			}
			if numeric[k] {
				for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == ',' }) {
					if x, err := strconv.ParseFloat(f, 64); err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
						t.Errorf("%s=%q on <%s> is not a finite number", k, v, e.name)
						break
					}
				}
			}
			if k == "href" {
				if _, ok := safeHref(v); !ok {
					t.Errorf("unsafe href %q", v)
				}
			}
		}
	}
}

// numeric are the attributes that hold coordinates or lengths.
var numeric = map[string]bool{
	"x": true, "y": true, "x1": true, "x2": true, "y1": true, "y2": true, "cx": true, "cy": true,
	"r": true, "rx": true, "width": true, "height": true, "points": true, "stroke-width": true,
	"font-size": true, "fill-opacity": true,
}

var t0 = time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC)

// hostile are labels a user or a model could have written into memory.
var hostile = []string{
	`</svg><script>alert(1)</script>`,
	`"><img src=x onerror=alert(1)>`,
	`' onmouseover='alert(1)`,
	`]]><!-- <![CDATA[ &amp; &#x3c; &lt;`,
	"nul\x00 esc\x1b del\x7f bell\x07",
	"bad utf-8 \xff\xfe and a cut rune \xe2\x82",
	"line\nbreak\r\ttab",
	"\ufffe\uffff noncharacters",
	`<foreignObject><body onload=alert(1)></foreignObject>`,
}

func TestHostileTextIsEscaped(t *testing.T) {
	for _, h := range hostile {
		var events []Event
		var pts []Point
		for i := range 3 {
			at := t0.Add(time.Duration(i) * time.Hour)
			events = append(events,
				Event{At: at, End: at.Add(30 * time.Minute), Lane: h, Label: h, Href: "/s?q=" + h},
				Event{At: at, Lane: "insights", Label: h, Href: h})
			pts = append(pts, Point{At: at, Value: float64(i), Label: h, Href: h})
		}
		charts := map[string]template.HTML{
			"timeline": Timeline(events, TimelineOptions{Title: h}),
			"lines":    Lines([]Series{{Name: h, Unit: h, Points: pts}}, ChartOptions{Title: h, Unit: h}),
		}
		for name, out := range charts {
			doc := parse(t, out)
			inert(t, doc)
			if strings.Contains(strings.ToLower(string(out)), "<script") {
				t.Errorf("%s: raw <script in output for %q", name, h)
			}
			// The title comes back as the label's text, XML-safe.
			want := strings.Map(func(r rune) rune {
				if r == '\uFFFD' || !xmlChar(r) {
					return '\uFFFD'
				}
				return r
			}, strings.ToValidUTF8(h, "\uFFFD"))
			want = strings.ReplaceAll(want, "\uFFFD\uFFFD", "\uFFFD")
			got := doc.all("title")[0].text
			got = strings.ReplaceAll(got, "\uFFFD\uFFFD", "\uFFFD")
			if got != want {
				t.Errorf("%s: title %q, want %q", name, got, want)
			}
		}
	}
}

func TestHrefsLinkOnlyWhenSafe(t *testing.T) {
	cases := []struct {
		href string
		link bool
	}{
		{"/inspect/sessions/s1?store=a&scope=b#turn-3", true},
		{"sessions/s1", true},
		{"?page=2", true},
		{"https://example.com/x", true},
		{"HTTP://example.com/x", true},
		{"mailto:someone@example.com", true},
		{"javascript:alert(1)", false},
		{"JaVaScRiPt:alert(1)", false},
		{" javascript:alert(1)", false},
		{"java\tscript:alert(1)", false},
		{"java\nscript:alert(1)", false},
		{"data:text/html,<script>alert(1)</script>", false},
		{"vbscript:msgbox", false},
		{"/ok\x00", false},
		{"/" + strings.Repeat("a", 3000), false},
		{"", false},
	}
	for _, c := range cases {
		tl := parse(t, Timeline([]Event{{At: t0, Label: "x", Href: c.href}}, TimelineOptions{}))
		ln := parse(t, Lines([]Series{{Points: []Point{{At: t0, Value: 1, Href: c.href}}}}, ChartOptions{}))
		for name, doc := range map[string]svgDoc{"timeline": tl, "lines": ln} {
			links := doc.all("a")
			if got := len(links) == 1; got != c.link {
				t.Errorf("%s: href %q linked = %v, want %v", name, c.href, got, c.link)
				continue
			}
			if c.link && links[0].attrs["href"] != c.href {
				t.Errorf("%s: href %q came back as %q", name, c.href, links[0].attrs["href"])
			}
		}
	}
}

func TestTimeTicks(t *testing.T) {
	tz := time.FixedZone("UTC+5:30", 5*3600+1800)
	cases := []struct {
		name     string
		lo, hi   time.Time
		maxTicks int
		want     []string
	}{
		{"seconds", t0, t0.Add(30 * time.Second), 8,
			[]string{"09:00", "09:00:05", "09:00:10", "09:00:15", "09:00:20", "09:00:25", "09:00:30"}},
		{"minutes", t0.Add(-time.Minute), t0.Add(61 * time.Minute), 8,
			[]string{"09:00", "09:10", "09:20", "09:30", "09:40", "09:50", "10:00"}},
		{"hours across midnight", t0.Add(12 * time.Hour), t0.Add(24 * time.Hour), 8,
			[]string{"22:00", "Mar 5", "02:00", "04:00", "06:00", "08:00"}},
		{"hours in another zone are UTC", t0.In(tz), t0.Add(5 * time.Hour).In(tz), 8,
			[]string{"09:00", "10:00", "11:00", "12:00", "13:00", "14:00"}},
		{"days", t0, t0.Add(5 * 24 * time.Hour), 8,
			[]string{"Mar 5", "Mar 6", "Mar 7", "Mar 8", "Mar 9"}},
		{"weeks start on Monday", t0, t0.Add(40 * 24 * time.Hour), 8,
			[]string{"Mar 9", "Mar 16", "Mar 23", "Mar 30", "Apr 6", "Apr 13"}},
		{"months across a new year", time.Date(2025, 10, 15, 0, 0, 0, 0, time.UTC), time.Date(2026, 4, 2, 0, 0, 0, 0, time.UTC), 8,
			[]string{"Nov", "Dec", "2026", "Feb", "Mar", "Apr"}},
		{"quarters", time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC), 8,
			[]string{"2025", "Apr", "Jul", "Oct", "2026", "Apr", "Jul", "Oct"}},
		{"decades", time.Date(1991, 6, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), 8,
			[]string{"1995", "2000", "2005", "2010", "2015", "2020", "2025"}},
		{"the whole range", time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC), time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), 8,
			[]string{"2000", "4000", "6000", "8000"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, tk := range timeTicks(c.lo, c.hi, c.maxTicks) {
				got = append(got, tk.label)
				if tk.at.Location() != time.UTC {
					t.Errorf("tick %v not in UTC", tk.at)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("ticks %q, want %q", got, c.want)
			}
		})
	}
}
