package plot

import (
	"math"
	"strconv"
	"time"
)

// A timeTick is one labelled position on a time axis.
type timeTick struct {
	at    time.Time
	label string
}

// timeStep is one candidate spacing of a time axis's ticks.
type timeStep struct {
	d      time.Duration // fixed steps; zero for months and years
	months int           // calendar steps of this many months
}

// fixedSteps are the tick spacings up to a week, smallest first.
var fixedSteps = []time.Duration{
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
	24 * time.Hour, 2 * 24 * time.Hour, 7 * 24 * time.Hour,
}

// monthSteps are the calendar tick spacings, in months.
var monthSteps = []int{1, 2, 3, 6, 12}

// timeTicks chooses ticks for the span lo..hi (UTC): the smallest step
// of one second, minutes, hours, days, a week, months or whole years
// that gives at most maxTicks ticks. A tick's label is as coarse as its
// alignment allows: "2026" on a year's start, "Mar" on a month's, "Mar 4"
// on a day's, "15:04" on a minute's, "15:04:05" otherwise.
func timeTicks(lo, hi time.Time, maxTicks int) []timeTick {
	lo, hi = lo.UTC(), hi.UTC()
	maxTicks = max(maxTicks, 2)
	span := seconds(hi, lo)
	for _, d := range fixedSteps {
		if span/d.Seconds() <= float64(maxTicks) {
			return fixedTicks(lo, hi, d)
		}
	}
	for _, m := range monthSteps {
		if span/(float64(m)*30.44*86400) <= float64(maxTicks) {
			return monthTicks(lo, hi, m)
		}
	}
	years := span / (365.25 * 86400)
	return yearTicks(lo, hi, int(niceStep(years/float64(maxTicks), true)))
}

// fixedTicks are the multiples of d (counted from a Monday 00:00 UTC for
// a week, from the Unix epoch otherwise) within lo..hi.
func fixedTicks(lo, hi time.Time, d time.Duration) []timeTick {
	// The epoch is a Thursday; weeks start on Mondays, 3 days later.
	origin := time.Unix(0, 0).UTC()
	if d == 7*24*time.Hour {
		origin = origin.Add(-3 * 24 * time.Hour)
	}
	step := int64(d / time.Second)
	first := int64(math.Ceil(seconds(lo, origin) / float64(step)))
	var ticks []timeTick
	for i := first; ; i++ {
		t := time.Unix(origin.Unix()+i*step, 0).UTC()
		if t.After(hi) {
			break
		}
		ticks = append(ticks, timeTick{at: t, label: tickLabel(t)})
	}
	return ticks
}

// monthTicks are the starts of months within lo..hi whose month of the
// year is a multiple of m (counted from January).
func monthTicks(lo, hi time.Time, m int) []timeTick {
	t := time.Date(lo.Year(), lo.Month(), 1, 0, 0, 0, 0, time.UTC)
	var ticks []timeTick
	for ; !t.After(hi); t = t.AddDate(0, 1, 0) {
		if t.Before(lo) || (int(t.Month())-1)%m != 0 {
			continue
		}
		ticks = append(ticks, timeTick{at: t, label: tickLabel(t)})
	}
	return ticks
}

// yearTicks are the starts of the years within lo..hi that are multiples
// of n.
func yearTicks(lo, hi time.Time, n int) []timeTick {
	n = max(n, 1)
	y := lo.Year()
	y += (n - y%n) % n
	var ticks []timeTick
	for ; y <= hi.Year(); y += n {
		t := time.Date(y, time.January, 1, 0, 0, 0, 0, time.UTC)
		if t.Before(lo) {
			continue
		}
		ticks = append(ticks, timeTick{at: t, label: strconv.Itoa(y)})
	}
	return ticks
}

// tickLabel is the coarsest label t's alignment allows.
func tickLabel(t time.Time) string {
	switch {
	case t.Month() == time.January && t.Day() == 1 && t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0:
		return strconv.Itoa(t.Year())
	case t.Day() == 1 && t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0:
		return t.Format("Jan")
	case t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0:
		return t.Format("Jan 2")
	case t.Second() == 0:
		return t.Format("15:04")
	}
	return t.Format("15:04:05")
}

// niceStep is the smallest 1, 2 or 5 times a power of ten that is at
// least raw; integer steps have no fraction (at least 1).
func niceStep(raw float64, integer bool) float64 {
	if !(raw > 0) || math.IsInf(raw, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * p
	for _, m := range []float64{1, 2, 5} {
		if m*p >= raw*(1-1e-9) {
			step = m * p
			break
		}
	}
	if integer && step < 1 {
		return 1
	}
	return step
}

// valueTicks chooses the y axis for values lo..hi: a range extended to
// multiples of a 1-2-5 step, with about target ticks. Equal lo and hi are
// spread around the value first.
func valueTicks(lo, hi float64, target int) (from, to, step float64) {
	if hi-lo <= math.Max(math.Abs(hi), math.Abs(lo))*1e-12 {
		switch {
		case lo == 0:
			lo, hi = 0, 1
		default:
			d := math.Abs(lo) / 2
			lo, hi = lo-d, hi+d
		}
	}
	step = niceStep((hi-lo)/float64(max(target, 1)), false)
	from = math.Floor(lo/step) * step
	to = math.Ceil(hi/step) * step
	return from, to, step
}

// formatValue writes v for a tick at the precision step needs:
// thousands and more get k, M, G or T, and numbers from 1e15 or with
// steps under 1e-4 an exponent.
func formatValue(v, step float64) string {
	if v == 0 {
		return "0"
	}
	suffix := ""
	for _, s := range []struct {
		f float64
		s string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if math.Abs(v) >= s.f && step >= s.f/10 && math.Abs(v) < 1e15 {
			v, step, suffix = v/s.f, step/s.f, s.s
			break
		}
	}
	if math.Abs(v) >= 1e15 || step < 1e-4 {
		// Exponent form, with the digits the step needs.
		digits := int(math.Floor(math.Log10(math.Abs(v))) - math.Floor(math.Log10(step)) + 1)
		return strconv.FormatFloat(v, 'g', min(max(digits, 1), 15), 64)
	}
	decimals := 0
	if step < 1 {
		decimals = int(math.Ceil(-math.Log10(step) - 1e-9))
	}
	return strconv.FormatFloat(v, 'f', decimals, 64) + suffix
}
