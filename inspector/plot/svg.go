package plot

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// palette holds the colours marks and series take in turn.
var palette = [...]string{
	"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
	"#59a14f", "#b07aa1", "#edc948", "#9c755f",
}

// colour is the palette's i-th colour, cycling.
func colour(i int) string { return palette[i%len(palette)] }

const (
	// maxText is the most characters of one label, lane name, title or
	// unit that are drawn.
	maxText = 200
	// minSize and maxSize clamp a chart's width and height.
	minSize = 200
	maxSize = 8000
	// fontFamily is the inline default font.
	fontFamily = "system-ui, -apple-system, Segoe UI, Roboto, sans-serif"
	// textColour and gridColour are the inline default colours of text,
	// axes and grid lines.
	textColour = "#333"
	axisColour = "#888"
	gridColour = "#e4e4e4"
)

// Margins around a chart's plot area, in pixels: room for the lane names
// or the y axis's labels on the left, for half of the last time label on
// the right, and for the time labels and range below.
const (
	laneLabelWidth = 112.0
	yAxisWidth     = 60.0
	marginRight    = 28.0
	marginBottom   = 44.0
)

// size is v clamped to minSize..maxSize, or def when v is zero or less.
func size(v, def int) int {
	if v <= 0 {
		return def
	}
	return min(max(v, minSize), maxSize)
}

// svgWriter builds an SVG document. Every text and attribute value passes
// through esc.
type svgWriter struct {
	b strings.Builder
}

// open writes the root element and the accessible title.
func (w *svgWriter) open(class string, width, height int, label string) {
	w.raw(`<svg xmlns="http://www.w3.org/2000/svg" class="plot `)
	w.raw(class)
	w.raw(`" width="`)
	w.raw(strconv.Itoa(width))
	w.raw(`" height="`)
	w.raw(strconv.Itoa(height))
	w.raw(`" viewBox="0 0 `)
	w.raw(strconv.Itoa(width))
	w.raw(" ")
	w.raw(strconv.Itoa(height))
	w.raw(`" role="img" aria-label="`)
	w.text(label)
	w.raw(`" font-family="` + fontFamily + `" font-size="12" fill="` + textColour + `"><title>`)
	w.text(label)
	w.raw("</title>")
}

// close ends the root element.
func (w *svgWriter) close() { w.raw("</svg>") }

// raw writes s as it stands; s must be markup this package wrote.
func (w *svgWriter) raw(s string) { w.b.WriteString(s) }

// num writes a coordinate with one decimal, never "-0".
func (w *svgWriter) num(v float64) { w.b.WriteString(coord(v)) }

// text writes s escaped for text content and attribute values.
func (w *svgWriter) text(s string) { esc(&w.b, s) }

// line writes a <line> from (x1, y1) to (x2, y2) in stroke, of class when
// class is not empty.
func (w *svgWriter) line(class string, x1, y1, x2, y2 float64, stroke string) {
	if class != "" {
		w.raw(`<line class="` + class + `" x1="`)
	} else {
		w.raw(`<line x1="`)
	}
	w.num(x1)
	w.raw(`" x2="`)
	w.num(x2)
	w.raw(`" y1="`)
	w.num(y1)
	w.raw(`" y2="`)
	w.num(y2)
	w.raw(`" stroke="` + stroke + `"/>`)
}

// String is the document.
func (w *svgWriter) String() string { return w.b.String() }

// coord formats a coordinate with at most one decimal.
func coord(v float64) string {
	r := math.Round(v*10) / 10
	if r == 0 || math.IsNaN(r) {
		return "0"
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// esc writes s with the five XML specials escaped, characters XML 1.0
// forbids and invalid UTF-8 replaced by U+FFFD, and at most maxText
// characters (a cut string ends in "…").
func esc(b *strings.Builder, s string) {
	n := 0
	for i, r := range s {
		if n == maxText {
			if i < len(s) {
				b.WriteString("…")
			}
			return
		}
		n++
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '\'':
			b.WriteString("&#39;")
		case r == '\n' || r == '\t':
			// Kept in text; attribute values normalise them to spaces.
			b.WriteRune(r)
		case r == '\r':
			b.WriteString("&#13;")
		case r == utf8.RuneError, !xmlChar(r):
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteRune(r)
		}
	}
}

// xmlChar reports whether XML 1.0 allows r in a document.
func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		(r >= 0x20 && r <= 0xD7FF) ||
		(r >= 0xE000 && r <= 0xFFFD) ||
		(r >= 0x10000 && r <= 0x10FFFF)
}

// short is s cut to n characters, ending in "…" when cut.
func short(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, c := 0, 0
	for i = range s {
		if c == n-1 {
			break
		}
		c++
	}
	return s[:i] + "…"
}

// safeHref is href when a link to it is safe to draw: relative, or http,
// https or mailto, with no control characters or spaces a browser would
// strip before reading the scheme, and at most 2048 bytes long.
func safeHref(href string) (string, bool) {
	if href == "" || len(href) > 2048 || !utf8.ValidString(href) {
		return "", false
	}
	for _, r := range href {
		if r <= 0x20 || r == 0x7F || !xmlChar(r) {
			return "", false
		}
	}
	i := strings.IndexAny(href, ":/?#")
	if i < 0 || href[i] != ':' {
		return href, true // relative: no scheme
	}
	switch strings.ToLower(href[:i]) {
	case "http", "https", "mailto":
		return href, true
	}
	return "", false
}

// noData is the chart drawn when there is nothing to draw.
func noData(class string, width, height int, label string) string {
	var w svgWriter
	w.open(class, width, height, label)
	w.raw(`<text class="no-data" x="`)
	w.num(float64(width) / 2)
	w.raw(`" y="`)
	w.num(float64(height) / 2)
	w.raw(`" text-anchor="middle" dominant-baseline="middle" fill="` + axisColour + `">no data</text>`)
	w.close()
	return w.String()
}

// title writes the chart's visible title, if any.
func (w *svgWriter) title(t string, x float64) {
	if t == "" {
		return
	}
	w.raw(`<text class="plot-title" x="`)
	w.num(x)
	w.raw(`" y="18" font-size="14" font-weight="600">`)
	w.text(t)
	w.raw("</text>")
}
