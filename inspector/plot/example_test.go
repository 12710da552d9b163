package plot_test

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/agentmemory/agentmemory/inspector/plot"
)

// A timeline of two sessions and an insight drawn from them, embedded in
// a page by html/template as it stands.
func ExampleTimeline() {
	t0 := time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC)
	svg := plot.Timeline([]plot.Event{
		{At: t0, End: t0.Add(40 * time.Minute), Lane: "sessions", Label: "planning the trip", Href: "/inspect/sessions/s1"},
		{At: t0.Add(2 * time.Hour), End: t0.Add(2*time.Hour + 25*time.Minute), Lane: "sessions", Label: "booking", Href: "/inspect/sessions/s2"},
		{At: t0.Add(3 * time.Hour), Lane: "insights", Label: "prefers window seats", Href: "/inspect/insights/i1"},
	}, plot.TimelineOptions{Title: "Sessions and insights"})

	page := template.Must(template.New("page").Parse(`<h2>Memory</h2>{{.}}`))
	var b strings.Builder
	if err := page.Execute(&b, svg); err != nil {
		panic(err)
	}
	s := b.String()
	fmt.Println(strings.HasPrefix(s, "<h2>Memory</h2><svg "), strings.Count(s, "<a href="), strings.Contains(s, `aria-label="Sessions and insights"`))
	// Output: true 3 true
}

// Latency of two operations over recent updates.
func ExampleLines() {
	t0 := time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC)
	var reflect, search plot.Series
	reflect = plot.Series{Name: "reflect", Unit: "ms"}
	search = plot.Series{Name: "search", Unit: "ms"}
	for i := range 5 {
		at := t0.Add(time.Duration(i) * time.Minute)
		reflect.Points = append(reflect.Points, plot.Point{At: at, Value: float64(800 + 50*i), Label: fmt.Sprintf("update %d", i)})
		search.Points = append(search.Points, plot.Point{At: at, Value: float64(40 + i)})
	}
	svg := plot.Lines([]plot.Series{reflect, search}, plot.ChartOptions{Title: "Latency"})
	s := string(svg)
	fmt.Println(strings.Count(s, "<polyline"), strings.Count(s, "<circle"), strings.Contains(s, ">ms</text>"))
	// Output: 2 10 true
}
