package main

import (
	"fmt"
	"strconv"
	"strings"
)

// parseSize reads a byte count: 4194304, 512KiB, 4MiB.
func parseSize(s string) (int, error) {
	n, err := parseSizeUpTo(s, 1<<30)
	return int(n), err
}

// parseSizeUpTo reads a byte count (4194304, 512KiB, 4MiB, 2GiB) of at
// most ceiling bytes.
func parseSizeUpTo(s string, ceiling int64) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a size: give bytes, or a whole number of KiB, MiB or GiB (e.g. 4MiB)", s)
	}
	if n > ceiling/mult {
		return 0, fmt.Errorf("%q is over the %s ceiling", s, sizeText(ceiling))
	}
	return n * mult, nil
}

// sizeText writes a byte count in the largest unit that divides it.
func sizeText(n int64) string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{" GiB", 1 << 30}, {" MiB", 1 << 20}, {" KiB", 1 << 10}} {
		if n >= u.mult && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// sizeFlag writes a byte count as a size flag's value (2GiB).
func sizeFlag(n int64) string {
	return strings.ReplaceAll(strings.TrimSuffix(sizeText(n), " bytes"), " ", "")
}
