package ta

import (
	"math"
	"strconv"
	"strings"
)

// This file holds TA-Lib's candlestick pattern recognition: each pattern
// reads open, high, low and close and gives +100 on a bar where a bullish
// pattern completes, -100 for a bearish one and 0 elsewhere (a few give
// ±80 for a weaker form or ±200 for a confirmation, as TA-Lib does).
//
// "Long", "short", "doji", "near" and so on are TA-Lib's candle settings:
// a candle's body, range or shadows compared with a factor times their
// average over the bars before that candle. The averages are running
// totals kept exactly as TA-Lib keeps them (the same start, the same
// order of additions), so a comparison that lands on a boundary lands on
// the same side.

// rangeKind is what a candle setting measures.
type rangeKind int

const (
	realBody rangeKind = iota // |close - open|
	highLow                   // high - low
	shadows                   // upper shadow + lower shadow
)

// candleSetting is one of TA-Lib's default candle settings.
type candleSetting struct {
	kind   rangeKind
	period int // bars averaged; 0 compares with the candle itself
	factor float64
}

// TA-Lib's default candle settings (its BodyVeryLong, 10 bars x 3.0, is
// used by none of the patterns).
var (
	bodyLong        = candleSetting{realBody, 10, 1.0}
	bodyShort       = candleSetting{realBody, 10, 1.0}
	bodyDoji        = candleSetting{highLow, 10, 0.1}
	shadowLong      = candleSetting{realBody, 0, 1.0}
	shadowVeryLong  = candleSetting{realBody, 0, 2.0}
	shadowShort     = candleSetting{shadows, 10, 1.0}
	shadowVeryShort = candleSetting{highLow, 10, 0.1}
	near            = candleSetting{highLow, 5, 0.2}
	far             = candleSetting{highLow, 5, 0.6}
	equal           = candleSetting{highLow, 5, 0.05}
)

// candles is the OHLC input of a pattern.
type candles struct{ o, h, l, c []float64 }

func (k *candles) body(i int) float64 { return math.Abs(k.c[i] - k.o[i]) }
func (k *candles) top(i int) float64 {
	if k.c[i] >= k.o[i] {
		return k.c[i]
	}
	return k.o[i]
}
func (k *candles) bottom(i int) float64 {
	if k.c[i] >= k.o[i] {
		return k.o[i]
	}
	return k.c[i]
}
func (k *candles) upper(i int) float64 { return k.h[i] - k.top(i) }
func (k *candles) lower(i int) float64 { return k.bottom(i) - k.l[i] }
func (k *candles) hl(i int) float64    { return k.h[i] - k.l[i] }

// color is 1 for a white (close >= open) candle, -1 for a black one.
func (k *candles) color(i int) float64 {
	if k.c[i] >= k.o[i] {
		return 1
	}
	return -1
}
func (k *candles) white(i int) bool { return k.c[i] >= k.o[i] }
func (k *candles) black(i int) bool { return k.c[i] < k.o[i] }

// bodyGapUp: candle i's body is entirely above candle j's.
func (k *candles) bodyGapUp(i, j int) bool {
	return math.Min(k.o[i], k.c[i]) > math.Max(k.o[j], k.c[j])
}
func (k *candles) bodyGapDown(i, j int) bool {
	return math.Max(k.o[i], k.c[i]) < math.Min(k.o[j], k.c[j])
}
func (k *candles) gapUp(i, j int) bool   { return k.l[i] > k.h[j] }
func (k *candles) gapDown(i, j int) bool { return k.h[i] < k.l[j] }
func (k *candles) bodyMax(i int) float64 { return math.Max(k.c[i], k.o[i]) }
func (k *candles) bodyMin(i int) float64 { return math.Min(k.c[i], k.o[i]) }

func (k *candles) rng(s candleSetting, i int) float64 {
	switch s.kind {
	case realBody:
		return k.body(i)
	case highLow:
		return k.hl(i)
	default:
		return k.upper(i) + k.lower(i)
	}
}

// avg returns, for every bar i from from on, TA-Lib's average of setting
// s for the candle back bars before i: factor times the mean of the
// setting's range over the period bars before that candle (the candle's
// own range for a zero period), halved for shadows. The running total
// starts at bar from and is updated as TA-Lib updates it.
func (k *candles) avg(s candleSetting, back, from int) []float64 {
	n := len(k.c)
	out := make([]float64, n)
	div := 1.0
	if s.kind == shadows {
		div = 2.0
	}
	if s.period == 0 {
		for i := from; i < n; i++ {
			out[i] = s.factor * k.rng(s, i-back) / div
		}
		return out
	}
	total := 0.0
	for j := from - back - s.period; j < from-back; j++ {
		total += k.rng(s, j)
	}
	p := float64(s.period)
	for i := from; i < n; i++ {
		out[i] = s.factor * (total / p) / div
		total += k.rng(s, i-back) - k.rng(s, i-back-s.period)
	}
	return out
}

// pattern is one TA-Lib candlestick function.
type pattern struct {
	talib   string  // e.g. "CDLDOJI"
	summary string  // what it finds and what the sign means
	pen     float64 // default penetration; < 0 when it takes none
	// lookback is TA-Lib's lookback (bars before the first output).
	lookback int
	// eval writes bar i's value for every i from start on.
	eval func(k *candles, start int, pen float64, out []float64)
}

// each runs f on every bar from start on.
func each(k *candles, start int, out []float64, f func(i int) float64) {
	for i := start; i < len(k.c); i++ {
		out[i] = f(i)
	}
}

func per(ss ...candleSetting) int {
	m := 0
	for _, s := range ss {
		m = max(m, s.period)
	}
	return m
}

// sign100 is 100 with the given sign.
func sign100(b bool) float64 {
	if b {
		return 100
	}
	return -100
}

// candleEntries turns the patterns into catalog entries named cdl_<name>.
func candleEntries() []*Entry {
	var es []*Entry
	for _, pt := range patterns() {
		pt := pt
		e := &Entry{
			Name: "cdl_" + strings.ToLower(strings.TrimPrefix(pt.talib, "CDL")), TALib: pt.talib, Category: Pattern,
			Summary: pt.summary, Inputs: ohlc, Outputs: one,
			WarmupRule: strconv.Itoa(pt.lookback), lookback: fixed(pt.lookback),
			compute: func(in [][]float64, p []float64) [][]float64 {
				k := &candles{o: in[0], h: in[1], l: in[2], c: in[3]}
				out := make([]float64, len(k.c))
				pen := pt.pen
				if len(p) > 0 {
					pen = p[0]
				}
				pt.eval(k, pt.lookback, pen, out)
				return outs(out)
			},
		}
		if pt.pen >= 0 {
			e.Params = []Param{floatP("penetration", "penetration", pt.pen, 0, 3e37, "how far (as a fraction of the first candle's body) the last candle must close into it")}
		}
		es = append(es, e)
	}
	return es
}

// patterns lists TA-Lib's 61 candlestick functions, as TA-Lib defines them.
func patterns() []pattern {
	return []pattern{
		{talib: "CDL2CROWS", pen: -1, summary: "two crows: long white, black gapping up, black closing inside the white body (-100)",
			lookback: bodyLong.period + 2, eval: func(k *candles, s int, _ float64, out []float64) {
				bl := k.avg(bodyLong, 2, s)
				each(k, s, out, func(i int) float64 {
					if k.white(i-2) && k.body(i-2) > bl[i] && k.black(i-1) && k.bodyGapUp(i-1, i-2) &&
						k.black(i) && k.o[i] < k.o[i-1] && k.o[i] > k.c[i-1] && k.c[i] > k.o[i-2] && k.c[i] < k.c[i-2] {
						return -100
					}
					return 0
				})
			}},
		{talib: "CDL3BLACKCROWS", pen: -1, summary: "three black crows: three declining black candles with very short lower shadows after a white one (-100)",
			lookback: shadowVeryShort.period + 3, eval: func(k *candles, s int, _ float64, out []float64) {
				v2, v1, v0 := k.avg(shadowVeryShort, 2, s), k.avg(shadowVeryShort, 1, s), k.avg(shadowVeryShort, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.white(i-3) && k.black(i-2) && k.lower(i-2) < v2[i] && k.black(i-1) && k.lower(i-1) < v1[i] &&
						k.black(i) && k.lower(i) < v0[i] && k.o[i-1] < k.o[i-2] && k.o[i-1] > k.c[i-2] &&
						k.o[i] < k.o[i-1] && k.o[i] > k.c[i-1] && k.h[i-3] > k.c[i-2] && k.c[i-2] > k.c[i-1] && k.c[i-1] > k.c[i] {
						return -100
					}
					return 0
				})
			}},
		{talib: "CDL3INSIDE", pen: -1, summary: "three inside up/down: a harami confirmed by a third candle closing beyond the first's open (+100 up, -100 down)",
			lookback: per(bodyShort, bodyLong) + 2, eval: func(k *candles, s int, _ float64, out []float64) {
				bl, bs := k.avg(bodyLong, 2, s), k.avg(bodyShort, 1, s)
				each(k, s, out, func(i int) float64 {
					if k.body(i-2) > bl[i] && k.body(i-1) <= bs[i] &&
						k.bodyMax(i-1) < k.bodyMax(i-2) && k.bodyMin(i-1) > k.bodyMin(i-2) &&
						(k.white(i-2) && k.black(i) && k.c[i] < k.o[i-2] || k.black(i-2) && k.white(i) && k.c[i] > k.o[i-2]) {
						return -k.color(i-2) * 100
					}
					return 0
				})
			}},
		{talib: "CDL3LINESTRIKE", pen: -1, summary: "three-line strike: three same-colour candles, then one of the other colour wiping them out (sign of the three)",
			lookback: near.period + 3, eval: func(k *candles, s int, _ float64, out []float64) {
				n3, n2 := k.avg(near, 3, s), k.avg(near, 2, s)
				each(k, s, out, func(i int) float64 {
					if k.color(i-3) == k.color(i-2) && k.color(i-2) == k.color(i-1) && k.color(i) == -k.color(i-1) &&
						k.o[i-2] >= k.bodyMin(i-3)-n3[i] && k.o[i-2] <= k.bodyMax(i-3)+n3[i] &&
						k.o[i-1] >= k.bodyMin(i-2)-n2[i] && k.o[i-1] <= k.bodyMax(i-2)+n2[i] &&
						(k.white(i-1) && k.c[i-1] > k.c[i-2] && k.c[i-2] > k.c[i-3] && k.o[i] > k.c[i-1] && k.c[i] < k.o[i-3] ||
							k.black(i-1) && k.c[i-1] < k.c[i-2] && k.c[i-2] < k.c[i-3] && k.o[i] < k.c[i-1] && k.c[i] > k.o[i-3]) {
						return k.color(i-1) * 100
					}
					return 0
				})
			}},
		{talib: "CDL3OUTSIDE", pen: -1, summary: "three outside up/down: an engulfing confirmed by a third candle moving on (+100 up, -100 down)",
			lookback: 3, eval: func(k *candles, s int, _ float64, out []float64) {
				each(k, s, out, func(i int) float64 {
					if k.white(i-1) && k.black(i-2) && k.c[i-1] > k.o[i-2] && k.o[i-1] < k.c[i-2] && k.c[i] > k.c[i-1] ||
						k.black(i-1) && k.white(i-2) && k.o[i-1] > k.c[i-2] && k.c[i-1] < k.o[i-2] && k.c[i] < k.c[i-1] {
						return k.color(i-1) * 100
					}
					return 0
				})
			}},
		{talib: "CDL3STARSINSOUTH", pen: -1, summary: "three stars in the south: three shrinking black candles, the last a small marubozu inside the second's range (+100)",
			lookback: per(shadowVeryShort, shadowLong, bodyLong, bodyShort) + 2, eval: func(k *candles, s int, _ float64, out []float64) {
				bl, sl := k.avg(bodyLong, 2, s), k.avg(shadowLong, 2, s)
				v1, v0, bs := k.avg(shadowVeryShort, 1, s), k.avg(shadowVeryShort, 0, s), k.avg(bodyShort, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.black(i-2) && k.black(i-1) && k.black(i) && k.body(i-2) > bl[i] && k.lower(i-2) > sl[i] &&
						k.body(i-1) < k.body(i-2) && k.o[i-1] > k.c[i-2] && k.o[i-1] <= k.h[i-2] && k.l[i-1] < k.c[i-2] &&
						k.l[i-1] >= k.l[i-2] && k.lower(i-1) > v1[i] && k.body(i) < bs[i] && k.lower(i) < v0[i] &&
						k.upper(i) < v0[i] && k.l[i] > k.l[i-1] && k.h[i] < k.h[i-1] {
						return 100
					}
					return 0
				})
			}},
		{talib: "CDL3WHITESOLDIERS", pen: -1, summary: "three advancing white soldiers: three rising white candles with very short upper shadows, each opening within the previous body (+100)",
			lookback: per(shadowVeryShort, bodyShort, far, near) + 2, eval: func(k *candles, s int, _ float64, out []float64) {
				v2, v1, v0 := k.avg(shadowVeryShort, 2, s), k.avg(shadowVeryShort, 1, s), k.avg(shadowVeryShort, 0, s)
				n2, n1, f2, f1 := k.avg(near, 2, s), k.avg(near, 1, s), k.avg(far, 2, s), k.avg(far, 1, s)
				bs := k.avg(bodyShort, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.white(i-2) && k.upper(i-2) < v2[i] && k.white(i-1) && k.upper(i-1) < v1[i] && k.white(i) && k.upper(i) < v0[i] &&
						k.c[i] > k.c[i-1] && k.c[i-1] > k.c[i-2] && k.o[i-1] > k.o[i-2] && k.o[i-1] <= k.c[i-2]+n2[i] &&
						k.o[i] > k.o[i-1] && k.o[i] <= k.c[i-1]+n1[i] && k.body(i-1) > k.body(i-2)-f2[i] &&
						k.body(i) > k.body(i-1)-f1[i] && k.body(i) > bs[i] {
						return 100
					}
					return 0
				})
			}},
		{talib: "CDLABANDONEDBABY", pen: 0.3, summary: "abandoned baby: long candle, doji gapped away from it, candle gapped back closing well into the first (sign of the last)",
			lookback: per(bodyDoji, bodyLong, bodyShort) + 2, eval: func(k *candles, s int, pen float64, out []float64) {
				bl, bd, bs := k.avg(bodyLong, 2, s), k.avg(bodyDoji, 1, s), k.avg(bodyShort, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.body(i-2) > bl[i] && k.body(i-1) <= bd[i] && k.body(i) > bs[i] &&
						(k.white(i-2) && k.black(i) && k.c[i] < k.c[i-2]-k.body(i-2)*pen && k.gapUp(i-1, i-2) && k.gapDown(i, i-1) ||
							k.black(i-2) && k.white(i) && k.c[i] > k.c[i-2]+k.body(i-2)*pen && k.gapDown(i-1, i-2) && k.gapUp(i, i-1)) {
						return k.color(i) * 100
					}
					return 0
				})
			}},
		{talib: "CDLADVANCEBLOCK", pen: -1, summary: "advance block: three rising white candles losing strength (-100)",
			lookback: per(shadowLong, shadowShort, far, near, bodyLong) + 2, eval: func(k *candles, s int, _ float64, out []float64) {
				ss2, ss1, ss0 := k.avg(shadowShort, 2, s), k.avg(shadowShort, 1, s), k.avg(shadowShort, 0, s)
				sl0 := k.avg(shadowLong, 0, s)
				n2, n1, f2, f1 := k.avg(near, 2, s), k.avg(near, 1, s), k.avg(far, 2, s), k.avg(far, 1, s)
				bl := k.avg(bodyLong, 2, s)
				each(k, s, out, func(i int) float64 {
					if k.white(i-2) && k.white(i-1) && k.white(i) && k.c[i] > k.c[i-1] && k.c[i-1] > k.c[i-2] &&
						k.o[i-1] > k.o[i-2] && k.o[i-1] <= k.c[i-2]+n2[i] && k.o[i] > k.o[i-1] && k.o[i] <= k.c[i-1]+n1[i] &&
						k.body(i-2) > bl[i] && k.upper(i-2) < ss2[i] &&
						(k.body(i-1) < k.body(i-2)-f2[i] && k.body(i) < k.body(i-1)+n1[i] ||
							k.body(i) < k.body(i-1)-f1[i] ||
							k.body(i) < k.body(i-1) && k.body(i-1) < k.body(i-2) && (k.upper(i) > ss0[i] || k.upper(i-1) > ss1[i]) ||
							k.body(i) < k.body(i-1) && k.upper(i) > sl0[i]) {
						return -100
					}
					return 0
				})
			}},
		{talib: "CDLBELTHOLD", pen: -1, summary: "belt hold: a long candle with no shadow on its opening side (sign of the candle)",
			lookback: per(bodyLong, shadowVeryShort), eval: func(k *candles, s int, _ float64, out []float64) {
				bl, vs := k.avg(bodyLong, 0, s), k.avg(shadowVeryShort, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.body(i) > bl[i] && (k.white(i) && k.lower(i) < vs[i] || k.black(i) && k.upper(i) < vs[i]) {
						return k.color(i) * 100
					}
					return 0
				})
			}},
		{talib: "CDLBREAKAWAY", pen: -1, summary: "breakaway: a long candle, a gap and three candles moving on, then one closing back inside the gap (sign of the last)",
			lookback: bodyLong.period + 4, eval: func(k *candles, s int, _ float64, out []float64) {
				bl := k.avg(bodyLong, 4, s)
				each(k, s, out, func(i int) float64 {
					if k.body(i-4) > bl[i] && k.color(i-4) == k.color(i-3) && k.color(i-3) == k.color(i-1) && k.color(i-1) == -k.color(i) &&
						(k.black(i-4) && k.bodyGapDown(i-3, i-4) && k.h[i-2] < k.h[i-3] && k.l[i-2] < k.l[i-3] &&
							k.h[i-1] < k.h[i-2] && k.l[i-1] < k.l[i-2] && k.c[i] > k.o[i-3] && k.c[i] < k.c[i-4] ||
							k.white(i-4) && k.bodyGapUp(i-3, i-4) && k.h[i-2] > k.h[i-3] && k.l[i-2] > k.l[i-3] &&
								k.h[i-1] > k.h[i-2] && k.l[i-1] > k.l[i-2] && k.c[i] < k.o[i-3] && k.c[i] > k.c[i-4]) {
						return k.color(i) * 100
					}
					return 0
				})
			}},
		{talib: "CDLCLOSINGMARUBOZU", pen: -1, summary: "closing marubozu: a long candle with no shadow on its closing side (sign of the candle)",
			lookback: per(bodyLong, shadowVeryShort), eval: func(k *candles, s int, _ float64, out []float64) {
				bl, vs := k.avg(bodyLong, 0, s), k.avg(shadowVeryShort, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.body(i) > bl[i] && (k.white(i) && k.upper(i) < vs[i] || k.black(i) && k.lower(i) < vs[i]) {
						return k.color(i) * 100
					}
					return 0
				})
			}},
		{talib: "CDLCONCEALBABYSWALL", pen: -1, summary: "concealing baby swallow: two black marubozu, a black candle gapping down with an upper shadow into the prior body, a black candle engulfing it (+100)",
			lookback: shadowVeryShort.period + 3, eval: func(k *candles, s int, _ float64, out []float64) {
				v3, v2, v1 := k.avg(shadowVeryShort, 3, s), k.avg(shadowVeryShort, 2, s), k.avg(shadowVeryShort, 1, s)
				each(k, s, out, func(i int) float64 {
					if k.black(i-3) && k.black(i-2) && k.black(i-1) && k.black(i) &&
						k.lower(i-3) < v3[i] && k.upper(i-3) < v3[i] && k.lower(i-2) < v2[i] && k.upper(i-2) < v2[i] &&
						k.bodyGapDown(i-1, i-2) && k.upper(i-1) > v1[i] && k.h[i-1] > k.c[i-2] && k.h[i] > k.h[i-1] && k.l[i] < k.l[i-1] {
						return 100
					}
					return 0
				})
			}},
		{talib: "CDLCOUNTERATTACK", pen: -1, summary: "counterattack: two long candles of opposite colour closing at the same level (sign of the second)",
			lookback: per(equal, bodyLong) + 1, eval: func(k *candles, s int, _ float64, out []float64) {
				eq, b1, b0 := k.avg(equal, 1, s), k.avg(bodyLong, 1, s), k.avg(bodyLong, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.color(i-1) == -k.color(i) && k.body(i-1) > b1[i] && k.body(i) > b0[i] &&
						k.c[i] <= k.c[i-1]+eq[i] && k.c[i] >= k.c[i-1]-eq[i] {
						return k.color(i) * 100
					}
					return 0
				})
			}},
		{talib: "CDLDARKCLOUDCOVER", pen: 0.5, summary: "dark cloud cover: long white, then black opening above its high and closing well into its body (-100)",
			lookback: bodyLong.period + 1, eval: func(k *candles, s int, pen float64, out []float64) {
				bl := k.avg(bodyLong, 1, s)
				each(k, s, out, func(i int) float64 {
					if k.white(i-1) && k.body(i-1) > bl[i] && k.black(i) && k.o[i] > k.h[i-1] && k.c[i] > k.o[i-1] &&
						k.c[i] < k.c[i-1]-k.body(i-1)*pen {
						return -100
					}
					return 0
				})
			}},
		{talib: "CDLDOJI", pen: -1, summary: "doji: open and close (nearly) equal (+100)",
			lookback: bodyDoji.period, eval: func(k *candles, s int, _ float64, out []float64) {
				bd := k.avg(bodyDoji, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.body(i) <= bd[i] {
						return 100
					}
					return 0
				})
			}},
		{talib: "CDLDOJISTAR", pen: -1, summary: "doji star: a long candle, then a doji gapping away in its direction (-100 after white, +100 after black)",
			lookback: per(bodyDoji, bodyLong) + 1, eval: func(k *candles, s int, _ float64, out []float64) {
				bl, bd := k.avg(bodyLong, 1, s), k.avg(bodyDoji, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.body(i-1) > bl[i] && k.body(i) <= bd[i] &&
						(k.white(i-1) && k.bodyGapUp(i, i-1) || k.black(i-1) && k.bodyGapDown(i, i-1)) {
						return -k.color(i-1) * 100
					}
					return 0
				})
			}},
		{talib: "CDLDRAGONFLYDOJI", pen: -1, summary: "dragonfly doji: a doji with no upper and a long lower shadow (+100)",
			lookback: per(bodyDoji, shadowVeryShort), eval: func(k *candles, s int, _ float64, out []float64) {
				bd, vs := k.avg(bodyDoji, 0, s), k.avg(shadowVeryShort, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.body(i) <= bd[i] && k.upper(i) < vs[i] && k.lower(i) > vs[i] {
						return 100
					}
					return 0
				})
			}},
		{talib: "CDLENGULFING", pen: -1, summary: "engulfing: a body engulfing the previous opposite one (sign of the second; ±80 when one end matches)",
			lookback: 2, eval: func(k *candles, s int, _ float64, out []float64) {
				each(k, s, out, func(i int) float64 {
					if k.white(i) && k.black(i-1) && (k.c[i] >= k.o[i-1] && k.o[i] < k.c[i-1] || k.c[i] > k.o[i-1] && k.o[i] <= k.c[i-1]) ||
						k.black(i) && k.white(i-1) && (k.o[i] >= k.c[i-1] && k.c[i] < k.o[i-1] || k.o[i] > k.c[i-1] && k.c[i] <= k.o[i-1]) {
						if k.o[i] != k.c[i-1] && k.c[i] != k.o[i-1] {
							return k.color(i) * 100
						}
						return k.color(i) * 80
					}
					return 0
				})
			}},
		{talib: "CDLEVENINGDOJISTAR", pen: 0.3, summary: "evening doji star: long white, doji gapping up, black closing well into the white body (-100)",
			lookback: per(bodyDoji, bodyLong, bodyShort) + 2, eval: func(k *candles, s int, pen float64, out []float64) {
				bl, bd, bs := k.avg(bodyLong, 2, s), k.avg(bodyDoji, 1, s), k.avg(bodyShort, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.body(i-2) > bl[i] && k.white(i-2) && k.body(i-1) <= bd[i] && k.bodyGapUp(i-1, i-2) &&
						k.body(i) > bs[i] && k.black(i) && k.c[i] < k.c[i-2]-k.body(i-2)*pen {
						return -100
					}
					return 0
				})
			}},
		{talib: "CDLEVENINGSTAR", pen: 0.3, summary: "evening star: long white, short candle gapping up, black closing well into the white body (-100)",
			lookback: per(bodyShort, bodyLong) + 2, eval: func(k *candles, s int, pen float64, out []float64) {
				bl, bs1, bs0 := k.avg(bodyLong, 2, s), k.avg(bodyShort, 1, s), k.avg(bodyShort, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.body(i-2) > bl[i] && k.white(i-2) && k.body(i-1) <= bs1[i] && k.bodyGapUp(i-1, i-2) &&
						k.body(i) > bs0[i] && k.black(i) && k.c[i] < k.c[i-2]-k.body(i-2)*pen {
						return -100
					}
					return 0
				})
			}},
		{talib: "CDLGAPSIDESIDEWHITE", pen: -1, summary: "up/down-gap side-by-side white lines: two similar white candles after a gap (+100 after a gap up, -100 down)",
			lookback: per(near, equal) + 2, eval: func(k *candles, s int, _ float64, out []float64) {
				nr, eq := k.avg(near, 1, s), k.avg(equal, 1, s)
				each(k, s, out, func(i int) float64 {
					if (k.bodyGapUp(i-1, i-2) && k.bodyGapUp(i, i-2) || k.bodyGapDown(i-1, i-2) && k.bodyGapDown(i, i-2)) &&
						k.white(i-1) && k.white(i) && k.body(i) >= k.body(i-1)-nr[i] && k.body(i) <= k.body(i-1)+nr[i] &&
						k.o[i] >= k.o[i-1]-eq[i] && k.o[i] <= k.o[i-1]+eq[i] {
						return sign100(k.bodyGapUp(i-1, i-2))
					}
					return 0
				})
			}},
		{talib: "CDLGRAVESTONEDOJI", pen: -1, summary: "gravestone doji: a doji with no lower and a long upper shadow (+100)",
			lookback: per(bodyDoji, shadowVeryShort), eval: func(k *candles, s int, _ float64, out []float64) {
				bd, vs := k.avg(bodyDoji, 0, s), k.avg(shadowVeryShort, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.body(i) <= bd[i] && k.lower(i) < vs[i] && k.upper(i) > vs[i] {
						return 100
					}
					return 0
				})
			}},
		{talib: "CDLHAMMER", pen: -1, summary: "hammer: small body near the previous low, long lower shadow, no upper shadow (+100)",
			lookback: per(bodyShort, shadowLong, shadowVeryShort, near) + 1, eval: func(k *candles, s int, _ float64, out []float64) {
				bs, sl, vs, nr := k.avg(bodyShort, 0, s), k.avg(shadowLong, 0, s), k.avg(shadowVeryShort, 0, s), k.avg(near, 1, s)
				each(k, s, out, func(i int) float64 {
					if k.body(i) < bs[i] && k.lower(i) > sl[i] && k.upper(i) < vs[i] && math.Min(k.c[i], k.o[i]) <= k.l[i-1]+nr[i] {
						return 100
					}
					return 0
				})
			}},
		{talib: "CDLHANGINGMAN", pen: -1, summary: "hanging man: small body near the previous high, long lower shadow, no upper shadow (-100)",
			lookback: per(bodyShort, shadowLong, shadowVeryShort, near) + 1, eval: func(k *candles, s int, _ float64, out []float64) {
				bs, sl, vs, nr := k.avg(bodyShort, 0, s), k.avg(shadowLong, 0, s), k.avg(shadowVeryShort, 0, s), k.avg(near, 1, s)
				each(k, s, out, func(i int) float64 {
					if k.body(i) < bs[i] && k.lower(i) > sl[i] && k.upper(i) < vs[i] && math.Min(k.c[i], k.o[i]) >= k.h[i-1]-nr[i] {
						return -100
					}
					return 0
				})
			}},
		{talib: "CDLHARAMI", pen: -1, summary: "harami: a short body inside the previous long one (-100 after white, +100 after black; ±80 when one end matches)",
			lookback: per(bodyShort, bodyLong) + 1, eval: func(k *candles, s int, _ float64, out []float64) {
				bl, bs := k.avg(bodyLong, 1, s), k.avg(bodyShort, 0, s)
				each(k, s, out, func(i int) float64 { return harami(k, i, k.body(i-1) > bl[i] && k.body(i) <= bs[i]) })
			}},
		{talib: "CDLHARAMICROSS", pen: -1, summary: "harami cross: a doji inside the previous long body (-100 after white, +100 after black; ±80 when one end matches)",
			lookback: per(bodyDoji, bodyLong) + 1, eval: func(k *candles, s int, _ float64, out []float64) {
				bl, bd := k.avg(bodyLong, 1, s), k.avg(bodyDoji, 0, s)
				each(k, s, out, func(i int) float64 { return harami(k, i, k.body(i-1) > bl[i] && k.body(i) <= bd[i]) })
			}},
		{talib: "CDLHIGHWAVE", pen: -1, summary: "high-wave candle: a short body with very long shadows both sides (sign of the candle)",
			lookback: per(bodyShort, shadowVeryLong), eval: func(k *candles, s int, _ float64, out []float64) {
				bs, vl := k.avg(bodyShort, 0, s), k.avg(shadowVeryLong, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.body(i) < bs[i] && k.upper(i) > vl[i] && k.lower(i) > vl[i] {
						return k.color(i) * 100
					}
					return 0
				})
			}},
		{talib: "CDLHIKKAKE", pen: -1, summary: "hikkake: an inside bar followed by a false breakout (±100), confirmed within three bars by a close beyond the inside bar (±200)",
			lookback: 5, eval: func(k *candles, s int, _ float64, out []float64) {
				hikkake(k, s, out, func(int) bool { return true })
			}},
		{talib: "CDLHIKKAKEMOD", pen: -1, summary: "modified hikkake: two nested inside bars, the second closing near its extreme, then a false breakout (±100), confirmed within three bars (±200)",
			lookback: max(1, near.period) + 5, eval: func(k *candles, s int, _ float64, out []float64) {
				nr := k.avg(near, 2, s-3)
				hikkake(k, s, out, func(i int) bool {
					return k.h[i-2] < k.h[i-3] && k.l[i-2] > k.l[i-3] &&
						(k.h[i] < k.h[i-1] && k.l[i] < k.l[i-1] && k.c[i-2] <= k.l[i-2]+nr[i] ||
							k.h[i] > k.h[i-1] && k.l[i] > k.l[i-1] && k.c[i-2] >= k.h[i-2]-nr[i])
				})
			}},
		{talib: "CDLHOMINGPIGEON", pen: -1, summary: "homing pigeon: a short black body inside the previous long black one (+100)",
			lookback: per(bodyShort, bodyLong) + 1, eval: func(k *candles, s int, _ float64, out []float64) {
				bl, bs := k.avg(bodyLong, 1, s), k.avg(bodyShort, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.black(i-1) && k.black(i) && k.body(i-1) > bl[i] && k.body(i) <= bs[i] && k.o[i] < k.o[i-1] && k.c[i] > k.c[i-1] {
						return 100
					}
					return 0
				})
			}},
		{talib: "CDLIDENTICAL3CROWS", pen: -1, summary: "identical three crows: three declining black candles, each opening at the previous close (-100)",
			lookback: per(shadowVeryShort, equal) + 2, eval: func(k *candles, s int, _ float64, out []float64) {
				v2, v1, v0 := k.avg(shadowVeryShort, 2, s), k.avg(shadowVeryShort, 1, s), k.avg(shadowVeryShort, 0, s)
				e2, e1 := k.avg(equal, 2, s), k.avg(equal, 1, s)
				each(k, s, out, func(i int) float64 {
					if k.black(i-2) && k.lower(i-2) < v2[i] && k.black(i-1) && k.lower(i-1) < v1[i] && k.black(i) && k.lower(i) < v0[i] &&
						k.c[i-2] > k.c[i-1] && k.c[i-1] > k.c[i] && k.o[i-1] <= k.c[i-2]+e2[i] && k.o[i-1] >= k.c[i-2]-e2[i] &&
						k.o[i] <= k.c[i-1]+e1[i] && k.o[i] >= k.c[i-1]-e1[i] {
						return -100
					}
					return 0
				})
			}},
		{talib: "CDLINNECK", pen: -1, summary: "in-neck: long black, then white opening below its low and closing just into its body (-100)",
			lookback: per(equal, bodyLong) + 1, eval: func(k *candles, s int, _ float64, out []float64) {
				eq, bl := k.avg(equal, 1, s), k.avg(bodyLong, 1, s)
				each(k, s, out, func(i int) float64 {
					if k.black(i-1) && k.body(i-1) > bl[i] && k.white(i) && k.o[i] < k.l[i-1] && k.c[i] <= k.c[i-1]+eq[i] && k.c[i] >= k.c[i-1] {
						return -100
					}
					return 0
				})
			}},
		{talib: "CDLINVERTEDHAMMER", pen: -1, summary: "inverted hammer: small body gapping down, long upper shadow, no lower shadow (+100)",
			lookback: per(bodyShort, shadowLong, shadowVeryShort) + 1, eval: func(k *candles, s int, _ float64, out []float64) {
				bs, sl, vs := k.avg(bodyShort, 0, s), k.avg(shadowLong, 0, s), k.avg(shadowVeryShort, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.body(i) < bs[i] && k.upper(i) > sl[i] && k.lower(i) < vs[i] && k.bodyGapDown(i, i-1) {
						return 100
					}
					return 0
				})
			}},
		{talib: "CDLKICKING", pen: -1, summary: "kicking: two opposite marubozu with a gap between them (sign of the second)",
			lookback: per(shadowVeryShort, bodyLong) + 1, eval: func(k *candles, s int, _ float64, out []float64) {
				kicking(k, s, out, func(i int) float64 { return k.color(i) * 100 })
			}},
		{talib: "CDLKICKINGBYLENGTH", pen: -1, summary: "kicking by length: two opposite marubozu with a gap, the sign of the longer one",
			lookback: per(shadowVeryShort, bodyLong) + 1, eval: func(k *candles, s int, _ float64, out []float64) {
				kicking(k, s, out, func(i int) float64 {
					if k.body(i) > k.body(i-1) {
						return k.color(i) * 100
					}
					return k.color(i-1) * 100
				})
			}},
		{talib: "CDLLADDERBOTTOM", pen: -1, summary: "ladder bottom: three declining black candles, a black one with an upper shadow, a white one closing above its high (+100)",
			lookback: shadowVeryShort.period + 4, eval: func(k *candles, s int, _ float64, out []float64) {
				vs := k.avg(shadowVeryShort, 1, s)
				each(k, s, out, func(i int) float64 {
					if k.black(i-4) && k.black(i-3) && k.black(i-2) && k.o[i-4] > k.o[i-3] && k.o[i-3] > k.o[i-2] &&
						k.c[i-4] > k.c[i-3] && k.c[i-3] > k.c[i-2] && k.black(i-1) && k.upper(i-1) > vs[i] &&
						k.white(i) && k.o[i] > k.o[i-1] && k.c[i] > k.h[i-1] {
						return 100
					}
					return 0
				})
			}},
		{talib: "CDLLONGLEGGEDDOJI", pen: -1, summary: "long-legged doji: a doji with a long shadow (+100)",
			lookback: per(bodyDoji, shadowLong), eval: func(k *candles, s int, _ float64, out []float64) {
				bd, sl := k.avg(bodyDoji, 0, s), k.avg(shadowLong, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.body(i) <= bd[i] && (k.lower(i) > sl[i] || k.upper(i) > sl[i]) {
						return 100
					}
					return 0
				})
			}},
		{talib: "CDLLONGLINE", pen: -1, summary: "long line: a long body with short shadows (sign of the candle)",
			lookback: per(bodyLong, shadowShort), eval: func(k *candles, s int, _ float64, out []float64) {
				bl, ss := k.avg(bodyLong, 0, s), k.avg(shadowShort, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.body(i) > bl[i] && k.upper(i) < ss[i] && k.lower(i) < ss[i] {
						return k.color(i) * 100
					}
					return 0
				})
			}},
		{talib: "CDLMARUBOZU", pen: -1, summary: "marubozu: a long body with no shadows (sign of the candle)",
			lookback: per(bodyLong, shadowVeryShort), eval: func(k *candles, s int, _ float64, out []float64) {
				bl, vs := k.avg(bodyLong, 0, s), k.avg(shadowVeryShort, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.body(i) > bl[i] && k.upper(i) < vs[i] && k.lower(i) < vs[i] {
						return k.color(i) * 100
					}
					return 0
				})
			}},
		{talib: "CDLMATCHINGLOW", pen: -1, summary: "matching low: two black candles closing at the same level (+100)",
			lookback: equal.period + 1, eval: func(k *candles, s int, _ float64, out []float64) {
				eq := k.avg(equal, 1, s)
				each(k, s, out, func(i int) float64 {
					if k.black(i-1) && k.black(i) && k.c[i] <= k.c[i-1]+eq[i] && k.c[i] >= k.c[i-1]-eq[i] {
						return 100
					}
					return 0
				})
			}},
		{talib: "CDLMATHOLD", pen: 0.5, summary: "mat hold: long white, three small falling candles holding within it after a gap, a white candle closing above them (+100)",
			lookback: per(bodyShort, bodyLong) + 4, eval: func(k *candles, s int, pen float64, out []float64) {
				b4, b3, b2, b1 := k.avg(bodyLong, 4, s), k.avg(bodyShort, 3, s), k.avg(bodyShort, 2, s), k.avg(bodyShort, 1, s)
				each(k, s, out, func(i int) float64 {
					if k.body(i-4) > b4[i] && k.body(i-3) < b3[i] && k.body(i-2) < b2[i] && k.body(i-1) < b1[i] &&
						k.white(i-4) && k.black(i-3) && k.white(i) && k.bodyGapUp(i-3, i-4) &&
						k.bodyMin(i-2) < k.c[i-4] && k.bodyMin(i-1) < k.c[i-4] &&
						k.bodyMin(i-2) > k.c[i-4]-k.body(i-4)*pen && k.bodyMin(i-1) > k.c[i-4]-k.body(i-4)*pen &&
						k.bodyMax(i-2) < k.o[i-3] && k.bodyMax(i-1) < k.bodyMax(i-2) && k.o[i] > k.c[i-1] &&
						k.c[i] > math.Max(math.Max(k.h[i-3], k.h[i-2]), k.h[i-1]) {
						return 100
					}
					return 0
				})
			}},
		{talib: "CDLMORNINGDOJISTAR", pen: 0.3, summary: "morning doji star: long black, doji gapping down, white closing well into the black body (+100)",
			lookback: per(bodyDoji, bodyLong, bodyShort) + 2, eval: func(k *candles, s int, pen float64, out []float64) {
				bl, bd, bs := k.avg(bodyLong, 2, s), k.avg(bodyDoji, 1, s), k.avg(bodyShort, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.body(i-2) > bl[i] && k.black(i-2) && k.body(i-1) <= bd[i] && k.bodyGapDown(i-1, i-2) &&
						k.body(i) > bs[i] && k.white(i) && k.c[i] > k.c[i-2]+k.body(i-2)*pen {
						return 100
					}
					return 0
				})
			}},
		{talib: "CDLMORNINGSTAR", pen: 0.3, summary: "morning star: long black, short candle gapping down, white closing well into the black body (+100)",
			lookback: per(bodyShort, bodyLong) + 2, eval: func(k *candles, s int, pen float64, out []float64) {
				bl, bs1, bs0 := k.avg(bodyLong, 2, s), k.avg(bodyShort, 1, s), k.avg(bodyShort, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.body(i-2) > bl[i] && k.black(i-2) && k.body(i-1) <= bs1[i] && k.bodyGapDown(i-1, i-2) &&
						k.body(i) > bs0[i] && k.white(i) && k.c[i] > k.c[i-2]+k.body(i-2)*pen {
						return 100
					}
					return 0
				})
			}},
		{talib: "CDLONNECK", pen: -1, summary: "on-neck: long black, then white opening below its low and closing at that low (-100)",
			lookback: per(equal, bodyLong) + 1, eval: func(k *candles, s int, _ float64, out []float64) {
				eq, bl := k.avg(equal, 1, s), k.avg(bodyLong, 1, s)
				each(k, s, out, func(i int) float64 {
					if k.black(i-1) && k.body(i-1) > bl[i] && k.white(i) && k.o[i] < k.l[i-1] &&
						k.c[i] <= k.l[i-1]+eq[i] && k.c[i] >= k.l[i-1]-eq[i] {
						return -100
					}
					return 0
				})
			}},
		{talib: "CDLPIERCING", pen: -1, summary: "piercing: long black, then long white opening below its low and closing above its midpoint (+100)",
			lookback: bodyLong.period + 1, eval: func(k *candles, s int, _ float64, out []float64) {
				b1, b0 := k.avg(bodyLong, 1, s), k.avg(bodyLong, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.black(i-1) && k.body(i-1) > b1[i] && k.white(i) && k.body(i) > b0[i] && k.o[i] < k.l[i-1] &&
						k.c[i] < k.o[i-1] && k.c[i] > k.c[i-1]+k.body(i-1)*0.5 {
						return 100
					}
					return 0
				})
			}},
		{talib: "CDLRICKSHAWMAN", pen: -1, summary: "rickshaw man: a doji with long shadows and its body near the middle of the range (+100)",
			lookback: per(bodyDoji, shadowLong, near), eval: func(k *candles, s int, _ float64, out []float64) {
				bd, sl, nr := k.avg(bodyDoji, 0, s), k.avg(shadowLong, 0, s), k.avg(near, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.body(i) <= bd[i] && k.lower(i) > sl[i] && k.upper(i) > sl[i] &&
						math.Min(k.o[i], k.c[i]) <= k.l[i]+k.hl(i)/2+nr[i] && math.Max(k.o[i], k.c[i]) >= k.l[i]+k.hl(i)/2-nr[i] {
						return 100
					}
					return 0
				})
			}},
		{talib: "CDLRISEFALL3METHODS", pen: -1, summary: "rising/falling three methods: a long candle, three small ones against it within its range, a long one resuming (+100 rising, -100 falling)",
			lookback: per(bodyShort, bodyLong) + 4, eval: func(k *candles, s int, _ float64, out []float64) {
				b4, b3, b2, b1, b0 := k.avg(bodyLong, 4, s), k.avg(bodyShort, 3, s), k.avg(bodyShort, 2, s), k.avg(bodyShort, 1, s), k.avg(bodyLong, 0, s)
				each(k, s, out, func(i int) float64 {
					c4 := k.color(i - 4)
					if k.body(i-4) > b4[i] && k.body(i-3) < b3[i] && k.body(i-2) < b2[i] && k.body(i-1) < b1[i] && k.body(i) > b0[i] &&
						c4 == -k.color(i-3) && k.color(i-3) == k.color(i-2) && k.color(i-2) == k.color(i-1) && k.color(i-1) == -k.color(i) &&
						k.bodyMin(i-3) < k.h[i-4] && k.bodyMax(i-3) > k.l[i-4] && k.bodyMin(i-2) < k.h[i-4] && k.bodyMax(i-2) > k.l[i-4] &&
						k.bodyMin(i-1) < k.h[i-4] && k.bodyMax(i-1) > k.l[i-4] &&
						k.c[i-2]*c4 < k.c[i-3]*c4 && k.c[i-1]*c4 < k.c[i-2]*c4 && k.o[i]*c4 > k.c[i-1]*c4 && k.c[i]*c4 > k.c[i-4]*c4 {
						return 100 * c4
					}
					return 0
				})
			}},
		{talib: "CDLSEPARATINGLINES", pen: -1, summary: "separating lines: opposite candles opening at the same level, the second a belt hold (sign of the second)",
			lookback: per(shadowVeryShort, bodyLong, equal) + 1, eval: func(k *candles, s int, _ float64, out []float64) {
				vs, bl, eq := k.avg(shadowVeryShort, 0, s), k.avg(bodyLong, 0, s), k.avg(equal, 1, s)
				each(k, s, out, func(i int) float64 {
					if k.color(i-1) == -k.color(i) && k.o[i] <= k.o[i-1]+eq[i] && k.o[i] >= k.o[i-1]-eq[i] && k.body(i) > bl[i] &&
						(k.white(i) && k.lower(i) < vs[i] || k.black(i) && k.upper(i) < vs[i]) {
						return k.color(i) * 100
					}
					return 0
				})
			}},
		{talib: "CDLSHOOTINGSTAR", pen: -1, summary: "shooting star: small body gapping up, long upper shadow, no lower shadow (-100)",
			lookback: per(bodyShort, shadowLong, shadowVeryShort) + 1, eval: func(k *candles, s int, _ float64, out []float64) {
				bs, sl, vs := k.avg(bodyShort, 0, s), k.avg(shadowLong, 0, s), k.avg(shadowVeryShort, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.body(i) < bs[i] && k.upper(i) > sl[i] && k.lower(i) < vs[i] && k.bodyGapUp(i, i-1) {
						return -100
					}
					return 0
				})
			}},
		{talib: "CDLSHORTLINE", pen: -1, summary: "short line: a short body with short shadows (sign of the candle)",
			lookback: per(bodyShort, shadowShort), eval: func(k *candles, s int, _ float64, out []float64) {
				bs, ss := k.avg(bodyShort, 0, s), k.avg(shadowShort, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.body(i) < bs[i] && k.upper(i) < ss[i] && k.lower(i) < ss[i] {
						return k.color(i) * 100
					}
					return 0
				})
			}},
		{talib: "CDLSPINNINGTOP", pen: -1, summary: "spinning top: a short body with shadows longer than it both sides (sign of the candle)",
			lookback: bodyShort.period, eval: func(k *candles, s int, _ float64, out []float64) {
				bs := k.avg(bodyShort, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.body(i) < bs[i] && k.upper(i) > k.body(i) && k.lower(i) > k.body(i) {
						return k.color(i) * 100
					}
					return 0
				})
			}},
		{talib: "CDLSTALLEDPATTERN", pen: -1, summary: "stalled pattern: two long rising white candles, then a small one riding on the second's shoulder (-100)",
			lookback: per(bodyLong, bodyShort, shadowVeryShort, near) + 2, eval: func(k *candles, s int, _ float64, out []float64) {
				b2, b1, bs := k.avg(bodyLong, 2, s), k.avg(bodyLong, 1, s), k.avg(bodyShort, 0, s)
				vs, n2, n1 := k.avg(shadowVeryShort, 1, s), k.avg(near, 2, s), k.avg(near, 1, s)
				each(k, s, out, func(i int) float64 {
					if k.white(i-2) && k.white(i-1) && k.white(i) && k.c[i] > k.c[i-1] && k.c[i-1] > k.c[i-2] &&
						k.body(i-2) > b2[i] && k.body(i-1) > b1[i] && k.upper(i-1) < vs[i] && k.o[i-1] > k.o[i-2] &&
						k.o[i-1] <= k.c[i-2]+n2[i] && k.body(i) < bs[i] && k.o[i] >= k.c[i-1]-k.body(i)-n1[i] {
						return -100
					}
					return 0
				})
			}},
		{talib: "CDLSTICKSANDWICH", pen: -1, summary: "stick sandwich: black, white trading above its close, black closing where the first did (+100)",
			lookback: equal.period + 2, eval: func(k *candles, s int, _ float64, out []float64) {
				eq := k.avg(equal, 2, s)
				each(k, s, out, func(i int) float64 {
					if k.black(i-2) && k.white(i-1) && k.black(i) && k.l[i-1] > k.c[i-2] && k.c[i] <= k.c[i-2]+eq[i] && k.c[i] >= k.c[i-2]-eq[i] {
						return 100
					}
					return 0
				})
			}},
		{talib: "CDLTAKURI", pen: -1, summary: "takuri: a dragonfly doji with a very long lower shadow (+100)",
			lookback: per(bodyDoji, shadowVeryShort, shadowVeryLong), eval: func(k *candles, s int, _ float64, out []float64) {
				bd, vs, vl := k.avg(bodyDoji, 0, s), k.avg(shadowVeryShort, 0, s), k.avg(shadowVeryLong, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.body(i) <= bd[i] && k.upper(i) < vs[i] && k.lower(i) > vl[i] {
						return 100
					}
					return 0
				})
			}},
		{talib: "CDLTASUKIGAP", pen: -1, summary: "tasuki gap: a gap, a candle in its direction, an opposite one of similar size closing inside the gap (sign of the middle candle)",
			lookback: near.period + 2, eval: func(k *candles, s int, _ float64, out []float64) {
				nr := k.avg(near, 1, s)
				each(k, s, out, func(i int) float64 {
					if k.bodyGapUp(i-1, i-2) && k.white(i-1) && k.black(i) && k.o[i] < k.c[i-1] && k.o[i] > k.o[i-1] &&
						k.c[i] < k.o[i-1] && k.c[i] > math.Max(k.c[i-2], k.o[i-2]) && math.Abs(k.body(i-1)-k.body(i)) < nr[i] ||
						k.bodyGapDown(i-1, i-2) && k.black(i-1) && k.white(i) && k.o[i] < k.o[i-1] && k.o[i] > k.c[i-1] &&
							k.c[i] > k.o[i-1] && k.c[i] < math.Min(k.c[i-2], k.o[i-2]) && math.Abs(k.body(i-1)-k.body(i)) < nr[i] {
						return k.color(i-1) * 100
					}
					return 0
				})
			}},
		{talib: "CDLTHRUSTING", pen: -1, summary: "thrusting: long black, then white opening below its low and closing into its body but under the midpoint (-100)",
			lookback: per(equal, bodyLong) + 1, eval: func(k *candles, s int, _ float64, out []float64) {
				eq, bl := k.avg(equal, 1, s), k.avg(bodyLong, 1, s)
				each(k, s, out, func(i int) float64 {
					if k.black(i-1) && k.body(i-1) > bl[i] && k.white(i) && k.o[i] < k.l[i-1] && k.c[i] > k.c[i-1]+eq[i] &&
						k.c[i] <= k.c[i-1]+k.body(i-1)*0.5 {
						return -100
					}
					return 0
				})
			}},
		{talib: "CDLTRISTAR", pen: -1, summary: "tristar: three doji, the middle one gapping away (-100 at a top, +100 at a bottom)",
			lookback: bodyDoji.period + 2, eval: func(k *candles, s int, _ float64, out []float64) {
				bd := k.avg(bodyDoji, 2, s)
				each(k, s, out, func(i int) float64 {
					v := 0.0
					if k.body(i-2) <= bd[i] && k.body(i-1) <= bd[i] && k.body(i) <= bd[i] {
						if k.bodyGapUp(i-1, i-2) && math.Max(k.o[i], k.c[i]) < math.Max(k.o[i-1], k.c[i-1]) {
							v = -100
						}
						if k.bodyGapDown(i-1, i-2) && math.Min(k.o[i], k.c[i]) > math.Min(k.o[i-1], k.c[i-1]) {
							v = 100
						}
					}
					return v
				})
			}},
		{talib: "CDLUNIQUE3RIVER", pen: -1, summary: "unique three river: long black, black harami with a lower low, small white opening above that low (+100)",
			lookback: per(bodyShort, bodyLong) + 2, eval: func(k *candles, s int, _ float64, out []float64) {
				bl, bs := k.avg(bodyLong, 2, s), k.avg(bodyShort, 0, s)
				each(k, s, out, func(i int) float64 {
					if k.body(i-2) > bl[i] && k.black(i-2) && k.black(i-1) && k.c[i-1] > k.c[i-2] && k.o[i-1] <= k.o[i-2] &&
						k.l[i-1] < k.l[i-2] && k.body(i) < bs[i] && k.white(i) && k.o[i] > k.l[i-1] {
						return 100
					}
					return 0
				})
			}},
		{talib: "CDLUPSIDEGAP2CROWS", pen: -1, summary: "upside gap two crows: long white, short black gapping up, black engulfing it but closing above the white (-100)",
			lookback: per(bodyShort, bodyLong) + 2, eval: func(k *candles, s int, _ float64, out []float64) {
				bl, bs := k.avg(bodyLong, 2, s), k.avg(bodyShort, 1, s)
				each(k, s, out, func(i int) float64 {
					if k.white(i-2) && k.body(i-2) > bl[i] && k.black(i-1) && k.body(i-1) <= bs[i] && k.bodyGapUp(i-1, i-2) &&
						k.black(i) && k.o[i] > k.o[i-1] && k.c[i] < k.c[i-1] && k.c[i] > k.c[i-2] {
						return -100
					}
					return 0
				})
			}},
		{talib: "CDLXSIDEGAP3METHODS", pen: -1, summary: "upside/downside gap three methods: two candles gapping one way, a third of the other colour closing the gap (sign of the first)",
			lookback: 2, eval: func(k *candles, s int, _ float64, out []float64) {
				each(k, s, out, func(i int) float64 {
					if k.color(i-2) == k.color(i-1) && k.color(i-1) == -k.color(i) &&
						k.o[i] < k.bodyMax(i-1) && k.o[i] > k.bodyMin(i-1) && k.c[i] < k.bodyMax(i-2) && k.c[i] > k.bodyMin(i-2) &&
						(k.white(i-2) && k.bodyGapUp(i-1, i-2) || k.black(i-2) && k.bodyGapDown(i-1, i-2)) {
						return k.color(i-2) * 100
					}
					return 0
				})
			}},
	}
}

// harami is the shared body test of HARAMI and HARAMICROSS once the first
// candle is long and the second short (or a doji): ±100 strictly inside,
// ±80 with one end matching.
func harami(k *candles, i int, sized bool) float64 {
	if !sized {
		return 0
	}
	if k.bodyMax(i) < k.bodyMax(i-1) && k.bodyMin(i) > k.bodyMin(i-1) {
		return -k.color(i-1) * 100
	}
	if k.bodyMax(i) <= k.bodyMax(i-1) && k.bodyMin(i) >= k.bodyMin(i-1) {
		return -k.color(i-1) * 80
	}
	return 0
}

// kicking is the shared test of KICKING and KICKINGBYLENGTH: two opposite
// marubozu with a gap; value gives the sign.
func kicking(k *candles, s int, out []float64, value func(i int) float64) {
	v1, v0 := k.avg(shadowVeryShort, 1, s), k.avg(shadowVeryShort, 0, s)
	b1, b0 := k.avg(bodyLong, 1, s), k.avg(bodyLong, 0, s)
	each(k, s, out, func(i int) float64 {
		if k.color(i-1) == -k.color(i) && k.body(i-1) > b1[i] && k.upper(i-1) < v1[i] && k.lower(i-1) < v1[i] &&
			k.body(i) > b0[i] && k.upper(i) < v0[i] && k.lower(i) < v0[i] &&
			(k.black(i-1) && k.gapUp(i, i-1) || k.white(i-1) && k.gapDown(i, i-1)) {
			return value(i)
		}
		return 0
	})
}

// hikkake runs HIKKAKE (inside 2) and HIKKAKEMOD (inside 3): an inside bar
// pattern at bar i (extra adds HIKKAKEMOD's conditions) sets ±100; a
// close beyond the inside bar within three bars confirms it with ±200. The
// state is primed over the three bars before start, as TA-Lib does.
func hikkake(k *candles, start int, out []float64, extra func(i int) bool) {
	patIdx, patRes := 0, 0.0
	for i := start - 3; i < len(k.c); i++ {
		v := 0.0
		if k.h[i-1] < k.h[i-2] && k.l[i-1] > k.l[i-2] &&
			(k.h[i] < k.h[i-1] && k.l[i] < k.l[i-1] || k.h[i] > k.h[i-1] && k.l[i] > k.l[i-1]) && extra(i) {
			patRes = sign100(k.h[i] < k.h[i-1])
			patIdx = i
			v = patRes
		} else if patIdx > 0 && i <= patIdx+3 && (patRes > 0 && k.c[i] > k.h[patIdx-1] || patRes < 0 && k.c[i] < k.l[patIdx-1]) {
			v = patRes + sign100(patRes > 0)
			patIdx = 0
		}
		if i >= start {
			out[i] = v
		}
	}
}
