package retrieval

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// relativeRE finds relative date expressions. Longer forms come first so
// "the day before yesterday" wins over "yesterday".
var relativeRE = regexp.MustCompile(`(?i)\b(the day before yesterday|the day after tomorrow|yesterday|today|tonight|tomorrow|` +
	`(?:last|next) (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|week|weekend|month|year)|` +
	`(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d{1,3}) (?:day|week|month|year)s? ago)\b`)

var numberWords = map[string]int{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}

var weekdays = map[string]time.Weekday{"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday, "thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday}

// ResolveDates annotates every relative date expression in text with the
// calendar date it means, counted from ref (the date of the document that
// says it): "last Friday" becomes "last Friday [2023-05-05]", "last month"
// becomes "last month [April 2023]". Text without such expressions is
// returned unchanged; a zero ref changes nothing.
func ResolveDates(text string, ref time.Time) string {
	if ref.IsZero() {
		return text
	}
	ref = ref.UTC()
	day := time.Date(ref.Year(), ref.Month(), ref.Day(), 0, 0, 0, 0, time.UTC)
	return relativeRE.ReplaceAllStringFunc(text, func(m string) string {
		if r := resolve(strings.ToLower(m), day); r != "" {
			return m + " [" + r + "]"
		}
		return m
	})
}

const dateLayout = "2006-01-02"

func resolve(expr string, day time.Time) string {
	switch expr {
	case "today", "tonight":
		return day.Format(dateLayout)
	case "yesterday":
		return day.AddDate(0, 0, -1).Format(dateLayout)
	case "tomorrow":
		return day.AddDate(0, 0, 1).Format(dateLayout)
	case "the day before yesterday":
		return day.AddDate(0, 0, -2).Format(dateLayout)
	case "the day after tomorrow":
		return day.AddDate(0, 0, 2).Format(dateLayout)
	}
	fields := strings.Fields(expr)
	if fields[len(fields)-1] == "ago" {
		n, ok := numberWords[fields[0]]
		if !ok {
			n, _ = strconv.Atoi(fields[0])
		}
		switch strings.TrimSuffix(fields[1], "s") {
		case "day":
			return day.AddDate(0, 0, -n).Format(dateLayout)
		case "week":
			return "week of " + monday(day.AddDate(0, 0, -7*n)).Format(dateLayout)
		case "month":
			return firstOfMonth(day).AddDate(0, -n, 0).Format("January 2006")
		case "year":
			return strconv.Itoa(day.Year() - n)
		}
		return ""
	}
	sign := 1
	if fields[0] == "last" {
		sign = -1
	}
	switch unit := fields[1]; unit {
	case "week":
		return "week of " + monday(day.AddDate(0, 0, 7*sign)).Format(dateLayout)
	case "weekend":
		// The weekend a Saturday starts; on a Saturday or Sunday, "last" and
		// "next" skip the current one.
		if sign < 0 {
			back := (int(day.Weekday()) - int(time.Saturday) + 7) % 7
			if back <= 1 {
				back += 7
			}
			return "weekend of " + day.AddDate(0, 0, -back).Format(dateLayout)
		}
		ahead := (int(time.Saturday) - int(day.Weekday()) + 7) % 7
		if ahead == 0 {
			ahead = 7
		}
		return "weekend of " + day.AddDate(0, 0, ahead).Format(dateLayout)
	case "month":
		return firstOfMonth(day).AddDate(0, sign, 0).Format("January 2006")
	case "year":
		return strconv.Itoa(day.Year() + sign)
	default:
		wd := weekdays[unit]
		diff := int(wd - day.Weekday())
		if sign < 0 {
			if diff >= 0 {
				diff -= 7
			}
		} else if diff <= 0 {
			diff += 7
		}
		return day.AddDate(0, 0, diff).Format(dateLayout)
	}
}

func monday(d time.Time) time.Time {
	off := (int(d.Weekday()) + 6) % 7
	return d.AddDate(0, 0, -off)
}

func firstOfMonth(d time.Time) time.Time {
	return time.Date(d.Year(), d.Month(), 1, 0, 0, 0, 0, time.UTC)
}
