// Package plot draws the memory inspector's charts as inline SVG on the
// server: a timeline of sessions and insights, and line charts of latency
// and tokens over recent updates. Nothing runs in the browser and nothing
// is fetched; a page embeds the returned template.HTML as it stands.
//
// # Charts
//
// Timeline draws one lane per Event.Lane value, in the order the lanes
// first appear in the input: an Event with End set is an interval (a
// session), one without is a point (an insight). Lines draws one polyline
// with point markers per Series against a shared time axis and a y axis
// whose ticks step by 1, 2 or 5 times a power of ten; when every value is
// zero or more the axis starts at zero. The y axis is labelled with
// ChartOptions.Unit, or the series' unit when they share one; otherwise
// the legend names each series' unit. A legend that would take more than
// half the chart's height lists the first series and says how many more
// there are.
//
// Both are pure functions: the same input gives the same bytes, and the
// output does not depend on the machine's time zone (times are drawn in
// UTC and the time axis picks seconds, minutes, hours, days, months or
// years by the span it shows). Empty input, or input with nothing that
// can be drawn, gives a small SVG that says "no data".
//
// # What is drawn and what is skipped
//
// Events and points at the zero time or outside the years 1 to 9999 are
// skipped, and so are values that are NaN, infinite or beyond ±1e300. An
// Event whose End is before its At is drawn as a point. A span shorter
// than a second (one event, or all at one instant) is widened to an hour
// around its middle.
//
// # Bounds
//
// The output stays bounded whatever the input's size. A timeline draws at
// most 16 lanes (lanes beyond the 15th share a last lane named for how many
// it holds) and at most 400 marks per lane: a lane with more events is
// drawn as marks that each gather the events starting in the same few
// pixels, with a tooltip giving their count, span and first labels. A line
// chart draws at most 8 series, at most 1,000 polyline vertices per series
// (the lowest and highest value of each pixel column, so spikes stay
// visible) and at most 300 markers per series (beyond that, the highest
// point of each column gets one). Labels, lane names, titles and units are
// cut to 200 characters, and a width or height is clamped to 200..8000
// pixels.
//
// # Safety
//
// Labels are memory text a user or a model wrote, so every text and
// attribute is escaped: a label such as "</svg><script>" comes out as
// inert text. Characters XML forbids and invalid UTF-8 become U+FFFD. An
// Href is linked only when it is a relative URL or an http, https or
// mailto one without control characters; any other (javascript:, data:)
// leaves the mark unlinked.
//
// # Styling
//
// The parts of a chart carry classes a style sheet can select: the root
// is "plot plot-timeline" or "plot plot-lines"; then plot-title, no-data,
// axis, y-axis, grid, tick, range (the axis's UTC span) and unit; a
// timeline's lane, lane-label, "marks lane-N" groups and marks of class
// "mark interval" or "mark point" ("gathered" added when a mark stands
// for many events); a line chart's "series series-N" groups, their mark
// circles, legend and legend-item. Each part also has inline presentation
// attributes (fill, stroke, font-size) with colours from a fixed palette
// of eight, so a chart looks right without the page's CSS, and any CSS
// rule overrides them. The output holds no style attributes, scripts or
// element ids, so it passes a Content-Security-Policy without
// 'unsafe-inline' and several charts can share a page. The root element
// has role="img" and an aria-label taken from the Title.
package plot
