// Package plot is a stand-in for the plots package being written on
// branch h-plots; this file is deleted when that branch is merged.
package plot

import (
	"fmt"
	"html"
	"html/template"
	"strings"
	"time"
)

type Event struct {
	At, End           time.Time
	Lane, Label, Href string
}

type TimelineOptions struct {
	Width, Height int
	Title         string
}

func Timeline(events []Event, opt TimelineOptions) template.HTML {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" role="img"><title>%s</title>`, html.EscapeString(opt.Title))
	for _, e := range events {
		fmt.Fprintf(&b, `<a href="%s"><circle r="3"><title>%s</title></circle></a>`, html.EscapeString(e.Href), html.EscapeString(e.Label))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

type Point struct {
	At          time.Time
	Value       float64
	Label, Href string
}

type Series struct {
	Name, Unit string
	Points     []Point
}

type ChartOptions struct {
	Width, Height int
	Title         string
	Unit          string
}

func Lines(series []Series, opt ChartOptions) template.HTML {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" role="img"><title>%s</title>`, html.EscapeString(opt.Title))
	for _, s := range series {
		fmt.Fprintf(&b, `<g><title>%s</title></g>`, html.EscapeString(s.Name))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
