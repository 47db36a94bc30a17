package paper

import (
	"encoding/binary"
	"hash/fnv"
	"sort"
	"strings"

	"github.com/shopspring/decimal"

	"wicket/internal/project"
)

// DefaultStart is the first mark of a symbol with no history and no
// configured start price.
var DefaultStart = decimal.NewFromInt(100)

// DefaultStepBps is the largest move of one random-walk step, in basis
// points.
const DefaultStepBps = 10

// Feed moves the marks. Each symbol follows a random walk that is a pure
// function of (Seed, symbol, step number), so the same seed always yields
// the same path and a restarted node continues where it stopped; or, when
// Replay holds closes for the symbol, the mark at step n is the n-th close
// (holding the last one once they run out); or, when Tape is set, the
// tape's bars walk the venue's orders (Venue.StepTape) and the symbols the
// tape does not drive keep still.
type Feed struct {
	Seed    uint64
	StepBps int64                        // largest move per step; 0 means DefaultStepBps
	Start   map[string]decimal.Decimal   // symbol → first mark (e.g. the last close of its history)
	Replay  map[string][]decimal.Decimal // symbol → closes to replay
	Tape    *Tape                        // a recorded tape on the tape's clock (tape.go)
}

// First is the first mark of symbol on venue: its replayed first close,
// else Start, else the venue's configured start price, else DefaultStart;
// rounded to the venue's price decimals.
func (f Feed) First(v project.Venue, symbol string) decimal.Decimal {
	var m decimal.Decimal
	if open, ok := f.Tape.first(symbol); ok {
		m = open
	} else if closes := f.Replay[symbol]; len(closes) > 0 {
		m = closes[0]
	} else if s, ok := f.Start[symbol]; ok && s.IsPositive() {
		m = s
	} else if s, ok := v.StartPrices[symbol]; ok && s.IsPositive() {
		m = s
	} else {
		m = DefaultStart
	}
	return floor(m.Round(v.PriceDecimals), v.PriceDecimals)
}

// Next is the mark of symbol at step (≥ 1), given the mark before it.
func (f Feed) Next(symbol string, step int64, prev decimal.Decimal, priceDecimals int32) decimal.Decimal {
	if closes := f.Replay[symbol]; len(closes) > 0 {
		i := min(step, int64(len(closes)-1))
		return floor(closes[i].Round(priceDecimals), priceDecimals)
	}
	bps := f.StepBps
	if bps <= 0 {
		bps = DefaultStepBps
	}
	u := int64(mix(f.Seed, symbol, step)%2001) - 1000 // uniform in [-1000, 1000]
	factor := decimal.NewFromInt(1).Add(decimal.New(u*bps, -7))
	return floor(prev.Mul(factor).Round(priceDecimals), priceDecimals)
}

// floor keeps a mark at least one price tick above zero.
func floor(m decimal.Decimal, priceDecimals int32) decimal.Decimal {
	tick := decimal.New(1, -priceDecimals)
	if m.LessThan(tick) {
		return tick
	}
	return m
}

// mix hashes (seed, symbol, step) to 64 well-mixed bits.
func mix(seed uint64, symbol string, step int64) uint64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	h.Write([]byte(symbol))
	binary.LittleEndian.PutUint64(b[:], uint64(step))
	h.Write(b[:])
	x := h.Sum64()
	// splitmix64 finalizer
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Source says where a paper venue's marks come from, for the snapshot.
func (f Feed) Source(string) string {
	if f.Tape != nil {
		return "simulated: the recorded tape of " + strings.Join(f.Tape.Symbols(), ", ") + " on the tape's clock (orders walk each bar by the backtest's rule); the rest keep still"
	}
	if len(f.Replay) == 0 {
		return "simulated: seeded random walk"
	}
	names := make([]string, 0, len(f.Replay))
	for s := range f.Replay {
		names = append(names, s)
	}
	sort.Strings(names)
	return "simulated: replayed closes for " + strings.Join(names, ", ") + ", seeded random walk for the rest"
}
