package ta

import (
	talib "github.com/markcheno/go-talib"
)

// Parameter constructors. Bounds follow TA-Lib's.

func periodP(def, min float64) Param {
	return Param{Name: "period", Type: Int, Default: def, Min: min, Max: 100000, Doc: "number of bars in the window", TALib: "timeperiod"}
}

func intP(name, talibName string, def, min float64, doc string) Param {
	return Param{Name: name, Type: Int, Default: def, Min: min, Max: 100000, Doc: doc, TALib: talibName}
}

func floatP(name, talibName string, def, min, max float64, doc string) Param {
	return Param{Name: name, Type: Float, Default: def, Min: min, Max: max, Doc: doc, TALib: talibName}
}

func maP(name, talibName, doc string) Param {
	return Param{Name: name, Type: MAType, Default: 0, Min: 0, Max: 8, Choices: MATypes, Doc: doc, TALib: talibName}
}

func pi(p []float64, i int) int          { return int(p[i]) }
func pm(p []float64, i int) talib.MaType { return talib.MaType(int(p[i])) }
func fixed(n int) func([]float64) int    { return func([]float64) int { return n } }
func periodMinus1(p []float64) int       { return pi(p, 0) - 1 }
func periodLB(p []float64) int           { return pi(p, 0) }
func outs(cols ...[]float64) [][]float64 { return cols }
func series1(f func(x []float64, p []float64) []float64) func([][]float64, []float64) [][]float64 {
	return func(in [][]float64, p []float64) [][]float64 { return outs(f(in[0], p)) }
}

// maLookback is TA-Lib's TA_MA_Lookback.
func maLookback(period int, t talib.MaType) int {
	if period <= 1 {
		return 0
	}
	switch t {
	case talib.DEMA:
		return 2 * (period - 1)
	case talib.TEMA:
		return 3 * (period - 1)
	case talib.KAMA:
		return period
	case talib.MAMA:
		return 32
	case talib.T3MA:
		return 6 * (period - 1)
	default: // SMA, EMA, WMA, TRIMA
		return period - 1
	}
}

var (
	hlc  = []string{"high", "low", "close"}
	hl   = []string{"high", "low"}
	ohlc = []string{"open", "high", "low", "close"}
	hlcv = []string{"high", "low", "close", "volume"}
	ser  = []string{"series"}
	one  = []string{"value"}
)

// entries is the built-in catalog.
func entries() []*Entry {
	es := []*Entry{
		// Overlap studies.
		{Name: "sma", TALib: "SMA", Category: Overlap, Summary: "simple moving average", Inputs: ser, Outputs: one,
			Params: []Param{periodP(30, 2)}, WarmupRule: "period - 1", lookback: periodMinus1,
			compute: series1(func(x, p []float64) []float64 { return talib.Sma(x, pi(p, 0)) })},
		{Name: "ema", TALib: "EMA", Category: Overlap, Summary: "exponential moving average (seeded with the SMA of the first period)", Inputs: ser, Outputs: one,
			Params: []Param{periodP(30, 2)}, WarmupRule: "period - 1", lookback: periodMinus1,
			compute: series1(func(x, p []float64) []float64 { return talib.Ema(x, pi(p, 0)) })},
		{Name: "wma", TALib: "WMA", Category: Overlap, Summary: "linearly weighted moving average", Inputs: ser, Outputs: one,
			Params: []Param{periodP(30, 2)}, WarmupRule: "period - 1", lookback: periodMinus1,
			compute: series1(func(x, p []float64) []float64 { return talib.Wma(x, pi(p, 0)) })},
		{Name: "dema", TALib: "DEMA", Category: Overlap, Summary: "double exponential moving average", Inputs: ser, Outputs: one,
			Params: []Param{periodP(30, 2)}, WarmupRule: "2 * (period - 1)", lookback: func(p []float64) int { return 2 * (pi(p, 0) - 1) },
			compute: series1(func(x, p []float64) []float64 { return talib.Dema(x, pi(p, 0)) })},
		{Name: "tema", TALib: "TEMA", Category: Overlap, Summary: "triple exponential moving average", Inputs: ser, Outputs: one,
			Params: []Param{periodP(30, 2)}, WarmupRule: "3 * (period - 1)", lookback: func(p []float64) int { return 3 * (pi(p, 0) - 1) },
			compute: series1(func(x, p []float64) []float64 { return talib.Tema(x, pi(p, 0)) })},
		{Name: "trima", TALib: "TRIMA", Category: Overlap, Summary: "triangular moving average", Inputs: ser, Outputs: one,
			Params: []Param{periodP(30, 2)}, WarmupRule: "period - 1", lookback: periodMinus1,
			compute: series1(func(x, p []float64) []float64 { return talib.Trima(x, pi(p, 0)) })},
		{Name: "kama", TALib: "KAMA", Category: Overlap, Summary: "Kaufman adaptive moving average", Inputs: ser, Outputs: one,
			Params: []Param{periodP(30, 2)}, WarmupRule: "period", lookback: periodLB,
			compute: series1(func(x, p []float64) []float64 { return talib.Kama(x, pi(p, 0)) })},
		{Name: "t3", TALib: "T3", Category: Overlap, Summary: "Tillson T3 moving average", Inputs: ser, Outputs: one,
			Params:     []Param{periodP(5, 2), floatP("vfactor", "vfactor", 0.7, 0, 1, "volume factor")},
			WarmupRule: "6 * (period - 1)", lookback: func(p []float64) int { return 6 * (pi(p, 0) - 1) },
			compute: series1(func(x, p []float64) []float64 { return talib.T3(x, pi(p, 0), p[1]) })},
		{Name: "mama", TALib: "MAMA", Category: Overlap, Summary: "MESA adaptive moving average and its following FAMA", Inputs: ser,
			Outputs: []string{"mama", "fama"},
			Params: []Param{floatP("fast_limit", "fastlimit", 0.5, 0.01, 0.99, "upper limit of the adaptive factor"),
				floatP("slow_limit", "slowlimit", 0.05, 0.01, 0.99, "lower limit of the adaptive factor")},
			WarmupRule: "32", lookback: fixed(32),
			compute: func(in [][]float64, p []float64) [][]float64 {
				m, f := mama(in[0], p[0], p[1])
				return outs(m, f)
			}},
		{Name: "ma", TALib: "MA", Category: Overlap, Summary: "moving average of a selectable kind (matype)", Inputs: ser, Outputs: one,
			Params:     []Param{periodP(30, 1), maP("matype", "matype", "kind of moving average")},
			WarmupRule: "lookback of the chosen moving average", lookback: func(p []float64) int { return maLookback(pi(p, 0), pm(p, 1)) },
			compute: series1(func(x, p []float64) []float64 { return ma(x, pi(p, 0), pm(p, 1)) })},
		{Name: "bbands", TALib: "BBANDS", Category: Overlap, Summary: "Bollinger bands: a moving average plus and minus a multiple of the standard deviation", Inputs: ser,
			Outputs: []string{"upper", "middle", "lower"},
			Params: []Param{periodP(5, 2), floatP("dev_up", "nbdevup", 2, -3e37, 3e37, "deviations above the average"),
				floatP("dev_dn", "nbdevdn", 2, -3e37, 3e37, "deviations below the average"), maP("matype", "matype", "kind of moving average")},
			WarmupRule: "lookback of the chosen moving average", lookback: func(p []float64) int { return maLookback(pi(p, 0), pm(p, 3)) },
			compute: bbands},
		{Name: "accbands", TALib: "ACCBANDS", Category: Overlap, Summary: "acceleration bands (Headley)", Inputs: hlc,
			Outputs: []string{"upper", "middle", "lower"}, Params: []Param{periodP(20, 2)},
			WarmupRule: "period - 1", lookback: periodMinus1, compute: accBands},
		{Name: "midpoint", TALib: "MIDPOINT", Category: Overlap, Summary: "midpoint of the highest and lowest value over the period", Inputs: ser, Outputs: one,
			Params: []Param{periodP(14, 2)}, WarmupRule: "period - 1", lookback: periodMinus1,
			compute: series1(func(x, p []float64) []float64 { return talib.MidPoint(x, pi(p, 0)) })},
		{Name: "midprice", TALib: "MIDPRICE", Category: Overlap, Summary: "midpoint of the highest high and lowest low over the period", Inputs: hl, Outputs: one,
			Params: []Param{periodP(14, 2)}, WarmupRule: "period - 1", lookback: periodMinus1,
			compute: func(in [][]float64, p []float64) [][]float64 { return outs(talib.MidPrice(in[0], in[1], pi(p, 0))) }},
		{Name: "sar", TALib: "SAR", Category: Overlap, Summary: "parabolic stop and reverse", Inputs: hl, Outputs: one,
			Params: []Param{floatP("acceleration", "acceleration", 0.02, 0, 3e37, "acceleration factor step"),
				floatP("maximum", "maximum", 0.2, 0, 3e37, "acceleration factor maximum")},
			WarmupRule: "1", lookback: fixed(1),
			compute: func(in [][]float64, p []float64) [][]float64 { return outs(talib.Sar(in[0], in[1], p[0], p[1])) }},
		{Name: "sarext", TALib: "SAREXT", Category: Overlap, Summary: "parabolic SAR with separate long and short factors (short values are negative)", Inputs: hl, Outputs: one,
			Params: []Param{
				floatP("start", "startvalue", 0, -3e37, 3e37, "start value; 0 picks the direction from the first bars"),
				floatP("offset", "offsetonreverse", 0, 0, 3e37, "percent offset added on reversal"),
				floatP("accel_init_long", "accelerationinitlong", 0.02, 0, 3e37, "initial long acceleration"),
				floatP("accel_long", "accelerationlong", 0.02, 0, 3e37, "long acceleration step"),
				floatP("accel_max_long", "accelerationmaxlong", 0.2, 0, 3e37, "long acceleration maximum"),
				floatP("accel_init_short", "accelerationinitshort", 0.02, 0, 3e37, "initial short acceleration"),
				floatP("accel_short", "accelerationshort", 0.02, 0, 3e37, "short acceleration step"),
				floatP("accel_max_short", "accelerationmaxshort", 0.2, 0, 3e37, "short acceleration maximum")},
			WarmupRule: "1", lookback: fixed(1),
			compute: func(in [][]float64, p []float64) [][]float64 {
				return outs(talib.SarExt(in[0], in[1], p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]))
			}},
		{Name: "ht_trendline", TALib: "HT_TRENDLINE", Category: Overlap, Summary: "Hilbert transform instantaneous trendline", Inputs: ser, Outputs: one,
			WarmupRule: "63", lookback: fixed(63),
			compute: series1(func(x, _ []float64) []float64 { return talib.HtTrendline(x) })},

		// Momentum.
		{Name: "rsi", TALib: "RSI", Category: Momentum, Summary: "relative strength index (Wilder), 0..100", Inputs: ser, Outputs: one,
			Params: []Param{periodP(14, 2)}, WarmupRule: "period", lookback: periodLB,
			compute: series1(func(x, p []float64) []float64 { return talib.Rsi(x, pi(p, 0)) })},
		{Name: "macd", TALib: "MACD", Category: Momentum, Summary: "moving average convergence/divergence: EMA(fast) - EMA(slow), its signal EMA and the histogram", Inputs: ser,
			Outputs: []string{"macd", "signal", "hist"},
			Params: []Param{intP("fast", "fastperiod", 12, 2, "fast EMA length"), intP("slow", "slowperiod", 26, 2, "slow EMA length"),
				intP("signal", "signalperiod", 9, 1, "signal EMA length")},
			WarmupRule: "max(fast, slow) - 1 + signal - 1", lookback: macdLookback, compute: macd},
		{Name: "macdfix", TALib: "MACDFIX", Category: Momentum, Summary: "MACD fixed at 12/26 with TA-Lib's fixed smoothing factors", Inputs: ser,
			Outputs: []string{"macd", "signal", "hist"}, Params: []Param{intP("signal", "signalperiod", 9, 1, "signal EMA length")},
			WarmupRule: "25 + signal - 1", lookback: func(p []float64) int { return 25 + pi(p, 0) - 1 }, compute: macdFix},
		{Name: "macdext", TALib: "MACDEXT", Category: Momentum, Summary: "MACD with selectable moving-average kinds", Inputs: ser,
			Outputs: []string{"macd", "signal", "hist"},
			Params: []Param{intP("fast", "fastperiod", 12, 2, "fast MA length"), maP("fast_matype", "fastmatype", "fast MA kind"),
				intP("slow", "slowperiod", 26, 2, "slow MA length"), maP("slow_matype", "slowmatype", "slow MA kind"),
				intP("signal", "signalperiod", 9, 1, "signal MA length"), maP("signal_matype", "signalmatype", "signal MA kind")},
			WarmupRule: "max(fast MA, slow MA lookback) + signal MA lookback", lookback: macdExtLookback, compute: macdExt},
		{Name: "apo", TALib: "APO", Category: Momentum, Summary: "absolute price oscillator: MA(fast) - MA(slow)", Inputs: ser, Outputs: one,
			Params:     []Param{intP("fast", "fastperiod", 12, 2, "fast MA length"), intP("slow", "slowperiod", 26, 2, "slow MA length"), maP("matype", "matype", "kind of moving average")},
			WarmupRule: "lookback of the slower moving average", lookback: poLookback, compute: func(in [][]float64, p []float64) [][]float64 { return outs(priceOsc(in[0], p, false)) }},
		{Name: "ppo", TALib: "PPO", Category: Momentum, Summary: "percentage price oscillator: 100 * (MA(fast) - MA(slow)) / MA(slow)", Inputs: ser, Outputs: one,
			Params:     []Param{intP("fast", "fastperiod", 12, 2, "fast MA length"), intP("slow", "slowperiod", 26, 2, "slow MA length"), maP("matype", "matype", "kind of moving average")},
			WarmupRule: "lookback of the slower moving average", lookback: poLookback, compute: func(in [][]float64, p []float64) [][]float64 { return outs(priceOsc(in[0], p, true)) }},
		{Name: "mom", TALib: "MOM", Category: Momentum, Summary: "momentum: value - value period bars ago", Inputs: ser, Outputs: one,
			Params: []Param{periodP(10, 1)}, WarmupRule: "period", lookback: periodLB,
			compute: series1(func(x, p []float64) []float64 { return talib.Mom(x, pi(p, 0)) })},
		{Name: "roc", TALib: "ROC", Category: Momentum, Summary: "rate of change in percent: 100 * (value / value period bars ago - 1)", Inputs: ser, Outputs: one,
			Params: []Param{periodP(10, 1)}, WarmupRule: "period", lookback: periodLB,
			compute: series1(func(x, p []float64) []float64 { return talib.Roc(x, pi(p, 0)) })},
		{Name: "rocp", TALib: "ROCP", Category: Momentum, Summary: "rate of change as a fraction: (value - prev) / prev", Inputs: ser, Outputs: one,
			Params: []Param{periodP(10, 1)}, WarmupRule: "period", lookback: periodLB,
			compute: series1(func(x, p []float64) []float64 { return talib.Rocp(x, pi(p, 0)) })},
		{Name: "rocr", TALib: "ROCR", Category: Momentum, Summary: "rate of change ratio: value / prev", Inputs: ser, Outputs: one,
			Params: []Param{periodP(10, 1)}, WarmupRule: "period", lookback: periodLB,
			compute: series1(func(x, p []float64) []float64 { return talib.Rocr(x, pi(p, 0)) })},
		{Name: "rocr100", TALib: "ROCR100", Category: Momentum, Summary: "rate of change ratio on a 100 scale: 100 * value / prev", Inputs: ser, Outputs: one,
			Params: []Param{periodP(10, 1)}, WarmupRule: "period", lookback: periodLB,
			compute: series1(func(x, p []float64) []float64 { return talib.Rocr100(x, pi(p, 0)) })},
		{Name: "cmo", TALib: "CMO", Category: Momentum, Summary: "Chande momentum oscillator, -100..100", Inputs: ser, Outputs: one,
			Params: []Param{periodP(14, 2)}, WarmupRule: "period", lookback: periodLB,
			compute: series1(func(x, p []float64) []float64 { return talib.Cmo(x, pi(p, 0)) })},
		{Name: "cci", TALib: "CCI", Category: Momentum, Summary: "commodity channel index", Inputs: hlc, Outputs: one,
			Params: []Param{periodP(14, 2)}, WarmupRule: "period - 1", lookback: periodMinus1,
			compute: func(in [][]float64, p []float64) [][]float64 { return outs(talib.Cci(in[0], in[1], in[2], pi(p, 0))) }},
		{Name: "willr", TALib: "WILLR", Category: Momentum, Summary: "Williams' %R, -100..0", Inputs: hlc, Outputs: one,
			Params: []Param{periodP(14, 2)}, WarmupRule: "period - 1", lookback: periodMinus1,
			compute: func(in [][]float64, p []float64) [][]float64 { return outs(talib.WillR(in[0], in[1], in[2], pi(p, 0))) }},
		{Name: "mfi", TALib: "MFI", Category: Momentum, Summary: "money flow index, a volume-weighted RSI, 0..100", Inputs: hlcv, Outputs: one,
			Params: []Param{periodP(14, 2)}, WarmupRule: "period", lookback: periodLB,
			compute: mfi},
		{Name: "bop", TALib: "BOP", Category: Momentum, Summary: "balance of power: (close - open) / (high - low)", Inputs: ohlc, Outputs: one,
			WarmupRule: "0", lookback: fixed(0),
			compute: func(in [][]float64, _ []float64) [][]float64 { return outs(talib.Bop(in[0], in[1], in[2], in[3])) }},
		{Name: "imi", TALib: "IMI", Category: Momentum, Summary: "intraday momentum index: share of up-candle bodies over the period, 0..100", Inputs: []string{"open", "close"}, Outputs: one,
			Params: []Param{periodP(14, 2)}, WarmupRule: "period - 1", lookback: periodMinus1, compute: imi},
		{Name: "stoch", TALib: "STOCH", Category: Momentum, Summary: "slow stochastic oscillator %K and %D", Inputs: hlc,
			Outputs: []string{"k", "d"},
			Params: []Param{intP("fastk", "fastk_period", 5, 1, "raw %K window"), intP("slowk", "slowk_period", 3, 1, "%K smoothing"),
				maP("slowk_matype", "slowk_matype", "%K smoothing kind"), intP("slowd", "slowd_period", 3, 1, "%D smoothing"),
				maP("slowd_matype", "slowd_matype", "%D smoothing kind")},
			WarmupRule: "fastk - 1 + MA lookback(slowk) + MA lookback(slowd)",
			lookback: func(p []float64) int {
				return pi(p, 0) - 1 + maLookback(pi(p, 1), pm(p, 2)) + maLookback(pi(p, 3), pm(p, 4))
			},
			compute: stoch},
		{Name: "stochf", TALib: "STOCHF", Category: Momentum, Summary: "fast stochastic oscillator %K and %D", Inputs: hlc,
			Outputs: []string{"k", "d"},
			Params: []Param{intP("fastk", "fastk_period", 5, 1, "%K window"), intP("fastd", "fastd_period", 3, 1, "%D smoothing"),
				maP("fastd_matype", "fastd_matype", "%D smoothing kind")},
			WarmupRule: "fastk - 1 + MA lookback(fastd)",
			lookback:   func(p []float64) int { return pi(p, 0) - 1 + maLookback(pi(p, 1), pm(p, 2)) },
			compute: func(in [][]float64, p []float64) [][]float64 {
				return stochF(in[0], in[1], in[2], pi(p, 0), pi(p, 1), pm(p, 2))
			}},
		{Name: "stochrsi", TALib: "STOCHRSI", Category: Momentum, Summary: "stochastic oscillator applied to the RSI", Inputs: ser,
			Outputs: []string{"k", "d"},
			Params: []Param{periodP(14, 2), intP("fastk", "fastk_period", 5, 1, "%K window"), intP("fastd", "fastd_period", 3, 1, "%D smoothing"),
				maP("fastd_matype", "fastd_matype", "%D smoothing kind")},
			WarmupRule: "period + fastk - 1 + MA lookback(fastd)",
			lookback:   func(p []float64) int { return pi(p, 0) + pi(p, 1) - 1 + maLookback(pi(p, 2), pm(p, 3)) },
			compute:    stochRsi},
		{Name: "trix", TALib: "TRIX", Category: Momentum, Summary: "one-bar rate of change of a triple-smoothed EMA", Inputs: ser, Outputs: one,
			Params: []Param{periodP(30, 1)}, WarmupRule: "3 * (period - 1) + 1", lookback: func(p []float64) int { return 3*(pi(p, 0)-1) + 1 },
			compute: series1(func(x, p []float64) []float64 { return talib.Trix(x, pi(p, 0)) })},
		{Name: "ultosc", TALib: "ULTOSC", Category: Momentum, Summary: "ultimate oscillator over three windows, 0..100", Inputs: hlc, Outputs: one,
			Params: []Param{intP("period1", "timeperiod1", 7, 1, "short window"), intP("period2", "timeperiod2", 14, 1, "middle window"),
				intP("period3", "timeperiod3", 28, 1, "long window")},
			WarmupRule: "max(period1, period2, period3)",
			lookback:   func(p []float64) int { return max(pi(p, 0), pi(p, 1), pi(p, 2)) },
			compute: func(in [][]float64, p []float64) [][]float64 {
				return outs(talib.UltOsc(in[0], in[1], in[2], pi(p, 0), pi(p, 1), pi(p, 2)))
			}},

		// Trend (directional movement and Aroon).
		{Name: "adx", TALib: "ADX", Category: Trend, Summary: "average directional movement index: trend strength, 0..100", Inputs: hlc, Outputs: one,
			Params: []Param{periodP(14, 2)}, WarmupRule: "2 * period - 1", lookback: func(p []float64) int { return 2*pi(p, 0) - 1 },
			compute: func(in [][]float64, p []float64) [][]float64 { return outs(talib.Adx(in[0], in[1], in[2], pi(p, 0))) }},
		{Name: "adxr", TALib: "ADXR", Category: Trend, Summary: "ADX rating: mean of ADX now and period - 1 bars ago", Inputs: hlc, Outputs: one,
			Params: []Param{periodP(14, 2)}, WarmupRule: "3 * period - 2", lookback: func(p []float64) int { return 3*pi(p, 0) - 2 },
			compute: func(in [][]float64, p []float64) [][]float64 { return outs(talib.AdxR(in[0], in[1], in[2], pi(p, 0))) }},
		{Name: "dx", TALib: "DX", Category: Trend, Summary: "directional movement index, 0..100", Inputs: hlc, Outputs: one,
			Params: []Param{periodP(14, 2)}, WarmupRule: "period", lookback: periodLB,
			compute: func(in [][]float64, p []float64) [][]float64 { return outs(talib.Dx(in[0], in[1], in[2], pi(p, 0))) }},
		{Name: "plus_di", TALib: "PLUS_DI", Category: Trend, Summary: "plus directional indicator (period 1: the bar's +DM divided by its true range)", Inputs: hlc, Outputs: one,
			Params: []Param{periodP(14, 1)}, WarmupRule: "period (1 for period 1)", lookback: dmLookback(true), compute: directional(true, true)},
		{Name: "minus_di", TALib: "MINUS_DI", Category: Trend, Summary: "minus directional indicator (period 1: the bar's -DM divided by its true range)", Inputs: hlc, Outputs: one,
			Params: []Param{periodP(14, 1)}, WarmupRule: "period (1 for period 1)", lookback: dmLookback(true), compute: directional(false, true)},
		{Name: "plus_dm", TALib: "PLUS_DM", Category: Trend, Summary: "plus directional movement (Wilder-smoothed; period 1: the bar's own)", Inputs: hl, Outputs: one,
			Params: []Param{periodP(14, 1)}, WarmupRule: "period - 1 (1 for period 1)", lookback: dmLookback(false), compute: directional(true, false)},
		{Name: "minus_dm", TALib: "MINUS_DM", Category: Trend, Summary: "minus directional movement (Wilder-smoothed; period 1: the bar's own)", Inputs: hl, Outputs: one,
			Params: []Param{periodP(14, 1)}, WarmupRule: "period - 1 (1 for period 1)", lookback: dmLookback(false), compute: directional(false, false)},
		{Name: "aroon", TALib: "AROON", Category: Trend, Summary: "Aroon down and up: how recently the lowest low and highest high occurred, 0..100", Inputs: hl,
			Outputs: []string{"down", "up"}, Params: []Param{periodP(14, 2)}, WarmupRule: "period", lookback: periodLB,
			compute: func(in [][]float64, p []float64) [][]float64 {
				d, u := talib.Aroon(in[0], in[1], pi(p, 0))
				return outs(d, u)
			}},
		{Name: "aroonosc", TALib: "AROONOSC", Category: Trend, Summary: "Aroon oscillator: up - down, -100..100", Inputs: hl, Outputs: one,
			Params: []Param{periodP(14, 2)}, WarmupRule: "period", lookback: periodLB,
			compute: func(in [][]float64, p []float64) [][]float64 { return outs(talib.AroonOsc(in[0], in[1], pi(p, 0))) }},

		// Volatility.
		{Name: "atr", TALib: "ATR", Category: Volatility, Summary: "average true range (Wilder)", Inputs: hlc, Outputs: one,
			Params: []Param{periodP(14, 1)}, WarmupRule: "period", lookback: periodLB,
			compute: func(in [][]float64, p []float64) [][]float64 { return outs(talib.Atr(in[0], in[1], in[2], pi(p, 0))) }},
		{Name: "natr", TALib: "NATR", Category: Volatility, Summary: "normalised average true range: 100 * ATR / close", Inputs: hlc, Outputs: one,
			Params: []Param{periodP(14, 1)}, WarmupRule: "period", lookback: periodLB,
			compute: func(in [][]float64, p []float64) [][]float64 { return outs(talib.Natr(in[0], in[1], in[2], pi(p, 0))) }},
		{Name: "trange", TALib: "TRANGE", Category: Volatility, Summary: "true range", Inputs: hlc, Outputs: one,
			WarmupRule: "1", lookback: fixed(1),
			compute: func(in [][]float64, _ []float64) [][]float64 { return outs(talib.TRange(in[0], in[1], in[2])) }},

		// Volume.
		{Name: "ad", TALib: "AD", Category: Volume, Summary: "Chaikin accumulation/distribution line", Inputs: hlcv, Outputs: one,
			WarmupRule: "0", lookback: fixed(0),
			compute: func(in [][]float64, _ []float64) [][]float64 { return outs(talib.Ad(in[0], in[1], in[2], in[3])) }},
		{Name: "adosc", TALib: "ADOSC", Category: Volume, Summary: "Chaikin A/D oscillator: EMA(fast) - EMA(slow) of the A/D line", Inputs: hlcv, Outputs: one,
			Params:     []Param{intP("fast", "fastperiod", 3, 2, "fast EMA length"), intP("slow", "slowperiod", 10, 2, "slow EMA length")},
			WarmupRule: "max(fast, slow) - 1", lookback: func(p []float64) int { return max(pi(p, 0), pi(p, 1)) - 1 },
			compute: func(in [][]float64, p []float64) [][]float64 {
				return outs(talib.AdOsc(in[0], in[1], in[2], in[3], pi(p, 0), pi(p, 1)))
			}},
		{Name: "obv", TALib: "OBV", Category: Volume, Summary: "on-balance volume", Inputs: []string{"close", "volume"}, Outputs: one,
			WarmupRule: "0", lookback: fixed(0),
			compute: func(in [][]float64, _ []float64) [][]float64 { return outs(talib.Obv(in[0], in[1])) }},

		// Cycle.
		{Name: "ht_dcperiod", TALib: "HT_DCPERIOD", Category: Cycle, Summary: "Hilbert transform dominant cycle period", Inputs: ser, Outputs: one,
			WarmupRule: "32", lookback: fixed(32), compute: series1(func(x, _ []float64) []float64 { return talib.HtDcPeriod(x) })},
		{Name: "ht_dcphase", TALib: "HT_DCPHASE", Category: Cycle, Summary: "Hilbert transform dominant cycle phase", Inputs: ser, Outputs: one,
			WarmupRule: "63", lookback: fixed(63), compute: series1(func(x, _ []float64) []float64 { return htPhase(x, htOutPhase)[0] })},
		{Name: "ht_phasor", TALib: "HT_PHASOR", Category: Cycle, Summary: "Hilbert transform phasor components", Inputs: ser,
			Outputs: []string{"inphase", "quadrature"}, WarmupRule: "32", lookback: fixed(32),
			compute: func(in [][]float64, _ []float64) [][]float64 { a, b := talib.HtPhasor(in[0]); return outs(a, b) }},
		{Name: "ht_sine", TALib: "HT_SINE", Category: Cycle, Summary: "Hilbert transform sine wave and lead sine", Inputs: ser,
			Outputs: []string{"sine", "leadsine"}, WarmupRule: "63", lookback: fixed(63),
			compute: func(in [][]float64, _ []float64) [][]float64 { return htPhase(in[0], htOutSine) }},
		{Name: "ht_trendmode", TALib: "HT_TRENDMODE", Category: Cycle, Summary: "Hilbert transform trend (1) versus cycle (0) mode", Inputs: ser, Outputs: one,
			WarmupRule: "63", lookback: fixed(63), compute: series1(func(x, _ []float64) []float64 { return htPhase(x, htOutTrend)[0] })},

		// Price transforms.
		{Name: "avgprice", TALib: "AVGPRICE", Category: PriceTransform, Summary: "average price: (open + high + low + close) / 4", Inputs: ohlc, Outputs: one,
			WarmupRule: "0", lookback: fixed(0),
			compute: func(in [][]float64, _ []float64) [][]float64 { return outs(talib.AvgPrice(in[0], in[1], in[2], in[3])) }},
		{Name: "medprice", TALib: "MEDPRICE", Category: PriceTransform, Summary: "median price: (high + low) / 2", Inputs: hl, Outputs: one,
			WarmupRule: "0", lookback: fixed(0),
			compute: func(in [][]float64, _ []float64) [][]float64 { return outs(talib.MedPrice(in[0], in[1])) }},
		{Name: "typprice", TALib: "TYPPRICE", Category: PriceTransform, Summary: "typical price: (high + low + close) / 3", Inputs: hlc, Outputs: one,
			WarmupRule: "0", lookback: fixed(0),
			compute: func(in [][]float64, _ []float64) [][]float64 { return outs(talib.TypPrice(in[0], in[1], in[2])) }},
		{Name: "wclprice", TALib: "WCLPRICE", Category: PriceTransform, Summary: "weighted close price: (high + low + 2 * close) / 4", Inputs: hlc, Outputs: one,
			WarmupRule: "0", lookback: fixed(0),
			compute: func(in [][]float64, _ []float64) [][]float64 { return outs(talib.WclPrice(in[0], in[1], in[2])) }},
		{Name: "avgdev", TALib: "AVGDEV", Category: PriceTransform, Summary: "mean absolute deviation from the mean over the period", Inputs: ser, Outputs: one,
			Params: []Param{periodP(14, 2)}, WarmupRule: "period - 1", lookback: periodMinus1, compute: series1(avgDev)},

		// Statistics.
		{Name: "stddev", TALib: "STDDEV", Category: Statistic, Summary: "population standard deviation times dev", Inputs: ser, Outputs: one,
			Params: []Param{periodP(5, 2), floatP("dev", "nbdev", 1, -3e37, 3e37, "multiplier")}, WarmupRule: "period - 1", lookback: periodMinus1,
			compute: series1(func(x, p []float64) []float64 { return talib.StdDev(x, pi(p, 0), p[1]) })},
		{Name: "var", TALib: "VAR", Category: Statistic, Summary: "population variance", Inputs: ser, Outputs: one,
			Params: []Param{periodP(5, 1), floatP("dev", "nbdev", 1, -3e37, 3e37, "unused; kept for TA-Lib compatibility")}, WarmupRule: "period - 1", lookback: periodMinus1,
			compute: series1(func(x, p []float64) []float64 { return talib.Var(x, pi(p, 0)) })},
		{Name: "beta", TALib: "BETA", Category: Statistic, Summary: "beta of a's returns against b's over the period", Inputs: []string{"a", "b"}, Outputs: one,
			Params: []Param{periodP(5, 1)}, WarmupRule: "period", lookback: periodLB,
			compute: func(in [][]float64, p []float64) [][]float64 { return outs(talib.Beta(in[0], in[1], pi(p, 0))) }},
		{Name: "correl", TALib: "CORREL", Category: Statistic, Summary: "Pearson correlation of a and b over the period", Inputs: []string{"a", "b"}, Outputs: one,
			Params: []Param{periodP(30, 1)}, WarmupRule: "period - 1", lookback: periodMinus1,
			compute: func(in [][]float64, p []float64) [][]float64 { return outs(talib.Correl(in[0], in[1], pi(p, 0))) }},
		{Name: "linearreg", TALib: "LINEARREG", Category: Statistic, Summary: "linear regression line's value at the current bar", Inputs: ser, Outputs: one,
			Params: []Param{periodP(14, 2)}, WarmupRule: "period - 1", lookback: periodMinus1,
			compute: series1(linReg(linRegValue))},
		{Name: "linearreg_angle", TALib: "LINEARREG_ANGLE", Category: Statistic, Summary: "linear regression slope as an angle in degrees", Inputs: ser, Outputs: one,
			Params: []Param{periodP(14, 2)}, WarmupRule: "period - 1", lookback: periodMinus1,
			compute: series1(linReg(linRegAngle))},
		{Name: "linearreg_intercept", TALib: "LINEARREG_INTERCEPT", Category: Statistic, Summary: "linear regression intercept", Inputs: ser, Outputs: one,
			Params: []Param{periodP(14, 2)}, WarmupRule: "period - 1", lookback: periodMinus1,
			compute: series1(linReg(linRegIntercept))},
		{Name: "linearreg_slope", TALib: "LINEARREG_SLOPE", Category: Statistic, Summary: "linear regression slope per bar", Inputs: ser, Outputs: one,
			Params: []Param{periodP(14, 2)}, WarmupRule: "period - 1", lookback: periodMinus1,
			compute: series1(linReg(linRegSlopeKind))},
		{Name: "tsf", TALib: "TSF", Category: Statistic, Summary: "time series forecast: the regression line extended one bar", Inputs: ser, Outputs: one,
			Params: []Param{periodP(14, 2)}, WarmupRule: "period - 1", lookback: periodMinus1,
			compute: series1(linReg(linRegForecast))},
		{Name: "max", TALib: "MAX", Category: Statistic, Summary: "highest value over the period", Inputs: ser, Outputs: one,
			Params: []Param{periodP(30, 2)}, WarmupRule: "period - 1", lookback: periodMinus1,
			compute: series1(func(x, p []float64) []float64 { return talib.Max(x, pi(p, 0)) })},
		{Name: "min", TALib: "MIN", Category: Statistic, Summary: "lowest value over the period", Inputs: ser, Outputs: one,
			Params: []Param{periodP(30, 2)}, WarmupRule: "period - 1", lookback: periodMinus1,
			compute: series1(func(x, p []float64) []float64 { return talib.Min(x, pi(p, 0)) })},
		{Name: "sum", TALib: "SUM", Category: Statistic, Summary: "sum over the period", Inputs: ser, Outputs: one,
			Params: []Param{periodP(30, 2)}, WarmupRule: "period - 1", lookback: periodMinus1,
			compute: series1(func(x, p []float64) []float64 { return talib.Sum(x, pi(p, 0)) })},
		{Name: "maxindex", TALib: "MAXINDEX", Category: Statistic, Summary: "bar position (from the first bar) of the highest value over the period", Inputs: ser, Outputs: one,
			Params: []Param{periodP(30, 2)}, WarmupRule: "period - 1", lookback: periodMinus1, index: []bool{true},
			compute: series1(func(x, p []float64) []float64 { return talib.MaxIndex(x, pi(p, 0)) })},
		{Name: "minindex", TALib: "MININDEX", Category: Statistic, Summary: "bar position (from the first bar) of the lowest value over the period", Inputs: ser, Outputs: one,
			Params: []Param{periodP(30, 2)}, WarmupRule: "period - 1", lookback: periodMinus1, index: []bool{true},
			compute: series1(func(x, p []float64) []float64 { return talib.MinIndex(x, pi(p, 0)) })},
		{Name: "minmax", TALib: "MINMAX", Category: Statistic, Summary: "lowest and highest values over the period", Inputs: ser,
			Outputs: []string{"min", "max"}, Params: []Param{periodP(30, 2)}, WarmupRule: "period - 1", lookback: periodMinus1,
			compute: func(in [][]float64, p []float64) [][]float64 {
				a, b := talib.MinMax(in[0], pi(p, 0))
				return outs(a, b)
			}},
		{Name: "minmaxindex", TALib: "MINMAXINDEX", Category: Statistic, Summary: "bar positions of the lowest and highest values over the period", Inputs: ser,
			Outputs: []string{"minidx", "maxidx"}, Params: []Param{periodP(30, 2)}, WarmupRule: "period - 1", lookback: periodMinus1, index: []bool{true, true},
			compute: func(in [][]float64, p []float64) [][]float64 {
				a, b := talib.MinMaxIndex(in[0], pi(p, 0))
				return outs(a, b)
			}},
	}
	es = append(es, candleEntries()...)
	es = append(es, mathEntries()...)
	return append(es, helpers()...)
}
