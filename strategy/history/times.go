package history

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// binanceTime reads a dump's open time: milliseconds, or microseconds in
// the dumps published since 2025, told apart by magnitude (any time after
// 1973 in ms is above 1e11; in µs above 1e14).
func binanceTime(s string, rep *ImportReport) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("open time %s is not an integer of milliseconds or microseconds", quoteField(s))
	}
	unit, t := "ms", n/1e3
	switch {
	case n >= 1e14:
		unit, t = "µs", n/1e6
		if n%1e6 != 0 {
			return 0, fmt.Errorf("open time %d µs is not a whole second", n)
		}
	case n%1e3 != 0:
		return 0, fmt.Errorf("open time %d ms is not a whole second", n)
	}
	if n <= 0 {
		return 0, fmt.Errorf("open time %d is not after 1970", n)
	}
	if rep.TimeUnit == "" {
		rep.TimeUnit = unit
	} else if rep.TimeUnit != unit {
		return 0, fmt.Errorf("open time %d is in %s but earlier rows are in %s", n, unit, rep.TimeUnit)
	}
	return t, nil
}

// parseAnyTime reads unix seconds, a zoned or zone-less ISO date-time or a
// bare date (a calendar day: 00:00 UTC, whatever tz says).
func parseAnyTime(s string, tz *time.Location) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("time is empty")
	}
	if u, ok := fastISO(s, tz); ok {
		return u, nil
	}
	return slowTime(s, tz)
}

// slowTime is parseAnyTime without the fast path.
func slowTime(s string, tz *time.Location) (int64, error) {
	if len(s) > maxTimeLen {
		return 0, fmt.Errorf("time %s is not a time: the longest wicket reads is %d bytes", quoteField(s), maxTimeLen)
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n > 1e11 || n < -1e11 {
			return 0, fmt.Errorf("time %d is out of range for unix seconds (milliseconds? divide by 1000)", n)
		}
		return n, nil
	}
	for _, l := range zoned {
		if t, err := time.Parse(l, s); err == nil {
			return t.Unix(), nil
		}
	}
	for _, l := range zoneless {
		if t, err := time.ParseInLocation(l, s, tz); err == nil {
			return t.Unix(), nil
		}
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t.Unix(), nil
	}
	return 0, fmt.Errorf("time %s is neither ISO 8601 (2024-01-02T15:00:00Z, 2024-01-02 15:00:00), a date (2024-01-02) nor unix seconds", quoteField(s))
}

// fastISO reads the common ISO 8601 shapes without allocating:
// 2006-01-02, then optionally [T ]15:04[:05[.frac]] and Z, ±07:00 or ±0700.
// A bare date is 00:00 UTC; a date-time without a zone is in tz. ok is
// false for anything else (the slower layouts then have a go).
func fastISO(s string, tz *time.Location) (int64, bool) {
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return 0, false
	}
	y, ok1 := digits(s[0:4])
	mo, ok2 := digits(s[5:7])
	d, ok3 := digits(s[8:10])
	if !ok1 || !ok2 || !ok3 || mo < 1 || mo > 12 || d < 1 || d > 31 {
		return 0, false
	}
	if len(s) == 10 {
		return checkedDate(y, mo, d, 0, 0, 0, time.UTC, 0)
	}
	if (s[10] != 'T' && s[10] != ' ') || len(s) < 16 || s[13] != ':' {
		return 0, false
	}
	hh, ok1 := digits(s[11:13])
	mm, ok2 := digits(s[14:16])
	if !ok1 || !ok2 || hh > 23 || mm > 59 {
		return 0, false
	}
	rest, ss := s[16:], 0
	if len(rest) >= 3 && rest[0] == ':' {
		v, ok := digits(rest[1:3])
		if !ok || v > 59 {
			return 0, false
		}
		ss, rest = v, rest[3:]
		if len(rest) > 1 && rest[0] == '.' {
			i := 1
			for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
				i++
			}
			if i == 1 {
				return 0, false
			}
			rest = rest[i:]
		}
	}
	switch {
	case rest == "":
		return checkedDate(y, mo, d, hh, mm, ss, tz, 0)
	case rest == "Z":
		return checkedDate(y, mo, d, hh, mm, ss, time.UTC, 0)
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':',
		len(rest) == 5 && (rest[0] == '+' || rest[0] == '-'):
		oh, ok1 := digits(rest[1:3])
		om, ok2 := digits(rest[len(rest)-2:])
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return 0, false
		}
		off := int64(oh*3600 + om*60)
		if rest[0] == '-' {
			off = -off
		}
		return checkedDate(y, mo, d, hh, mm, ss, time.UTC, off)
	}
	return 0, false
}

func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// checkedDate builds the time and refuses a day the month does not have
// (time.Date would roll 2024-02-30 into March).
func checkedDate(y, mo, d, hh, mm, ss int, loc *time.Location, off int64) (int64, bool) {
	t := time.Date(y, time.Month(mo), d, hh, mm, ss, 0, loc)
	if t.Day() != d {
		return 0, false
	}
	return t.Unix() - off, true
}

func mustZone(name string) *time.Location {
	l, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return l
}

// newYorkDay maps a US stock daily bar stamped at New York midnight
// (04:00 or 05:00 UTC, as Alpaca stamps them) to 00:00 UTC of that trading
// day; any other time is returned unchanged (and the grid check judges it).
func newYorkDay(t int64) int64 {
	ny := time.Unix(t, 0).In(newYork)
	if ny.Hour() != 0 || ny.Minute() != 0 || ny.Second() != 0 {
		return t
	}
	return time.Date(ny.Year(), ny.Month(), ny.Day(), 0, 0, 0, 0, time.UTC).Unix()
}

// NewYorkDay is newYorkDay for the Alpaca provider.
func NewYorkDay(t int64) int64 { return newYorkDay(t) }

// ParseTime reads a command-line time: RFC3339, a zone-less date-time (in
// tz), a date (00:00 UTC) or unix seconds.
func ParseTime(s string, tz *time.Location) (time.Time, error) {
	if tz == nil {
		tz = time.UTC
	}
	u, err := parseAnyTime(s, tz)
	if err != nil {
		return time.Time{}, err
	}
	return time.Unix(u, 0).UTC(), nil
}
