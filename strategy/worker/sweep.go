package worker

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"wicket/strategy/backtest"
)

// KindSweep is the request kind that backtests a chunk of knob
// combinations of one strategy over one series: SweepChunk → SweepChunkResult.
const KindSweep = "sweep"

// SweepChunk asks a worker to backtest Combos one after another over
// the bars of Series between From and To (RFC3339, inclusive), trading
// from TradeFrom (empty: from the first bar; earlier bars only feed the
// indicators). It is plain JSON: it crosses the worker pipe.
type SweepChunk struct {
	Name          string `json:"name"`
	Source        string `json:"source"`
	IndicatorsDir string `json:"indicators_dir,omitempty"`
	HistoryPath   string `json:"history_path"`
	Series        string `json:"series"`
	From          string `json:"from,omitempty"`
	To            string `json:"to,omitempty"`
	TradeFrom     string `json:"trade_from,omitempty"`
	// Digest is strategy.Bars.Digest of the bars in [From, To] as the
	// caller knows them (read itself, or reported by an earlier chunk's
	// Bars): a worker that holds bars of that range with this digest uses
	// them instead of reading the store again, and one that reads the
	// store and finds other bars fails the chunk (they changed mid-sweep).
	// Empty: the worker reads the store unless it holds a copy it read
	// for this very request.
	Digest string `json:"digest,omitempty"`
	// BarsFile, when set, is a file holding those bars in the form
	// strategy.Bars.Encode writes (hashing to Digest): a cluster worker's
	// copy of bars shipped from another machine, kept only once they
	// hashed to it. The worker maps it read-only instead of reading the
	// history store, and HistoryPath may be empty.
	BarsFile string `json:"bars_file,omitempty"`
	// SharedBars, when set, is a shared bars file on this machine holding
	// those bars (written by the worker that answered the sweep's params
	// request, BarsRange.ShareDir): the worker maps it read-only, so the
	// workers of one machine read one copy, and caches the mapping as the
	// bars of HistoryPath's range with Digest.
	SharedBars string `json:"shared_bars,omitempty"`
	// FundingDigest names the funding of the bars' pair shipped with
	// them from another machine (Funding.Encode, hashing to it), and
	// FundingFile is the worker machine's copy: the worker charges it,
	// clipped to the bars' span, instead of reading the history store,
	// and refuses a file that does not hash to FundingDigest. Empty: the
	// store, when HistoryPath is set, holds the funding.
	FundingDigest string           `json:"funding_digest,omitempty"`
	FundingFile   string           `json:"funding_file,omitempty"`
	Capital       string           `json:"capital"`
	FeeBps        float64          `json:"fee_bps"`
	SlippageBps   float64          `json:"slippage_bps"`
	Combos        []map[string]any `json:"combos"`
	// Returns asks for every traded bar's return (walk-forward stitching).
	Returns bool `json:"returns,omitempty"`
	// Blocks, when > 0, asks for each trial's returns summed in that many
	// blocks (the probability of backtest overfitting, research's pbo.go).
	Blocks int `json:"blocks,omitempty"`
	// Intrabar is how a bar's path fills protective orders (path when
	// empty), and CostOptions the costs beyond fee and slippage: as a
	// backtest takes them.
	Intrabar string `json:"intrabar,omitempty"`
	backtest.CostOptions
}

// SweepChunkResult holds one trial per combination, in order, the bars
// the chunk ran over, and the indicator computations the chunk caused in
// this worker's memo.
type SweepChunkResult struct {
	Trials   []Trial           `json:"trials"`
	Bars     BarsSeen          `json:"bars"`
	Computed map[string]uint64 `json:"computed,omitempty"`
	// Seconds is the time the worker spent on the chunk, from decoding
	// its request to encoding this answer (finding the bars, compiling
	// the strategy, the combinations); the rest of a chunk's round trip
	// is the pipe and the caller's side. For diagnostics.
	Seconds float64 `json:"seconds,omitempty"`
	// Work is the part of Seconds the combinations themselves took.
	Work float64 `json:"work,omitempty"`
	// Called is the chunk's round trip as its caller timed it; it never
	// travels.
	Called time.Duration `json:"-"`
	// Refused is how many answers to this chunk a research cluster
	// refused as forged or altered before this one (strategy/cluster); it
	// never travels.
	Refused int `json:"-"`
}

// BarsSeen describes the bars a chunk ran over, so a caller that never
// read them itself knows what its sweep saw: their digest
// (strategy.Bars.Digest), count, and first and last bar times (Unix
// seconds).
type BarsSeen struct {
	Digest string `json:"digest"`
	Count  int    `json:"count"`
	First  int64  `json:"first"`
	Last   int64  `json:"last"`
}

// Trial is one combination's outcome: its metrics (the JSON a backtest
// reports), the rank scores at full precision, the return statistics the
// deflated Sharpe ratio needs, and nothing per bar unless asked for.
type Trial struct {
	Values  map[string]any  `json:"values,omitempty"` // every knob's value
	Metrics json.RawMessage `json:"metrics,omitempty"`
	Scores  Scores          `json:"scores"`
	Stats   ReturnStats     `json:"stats"`
	Trades  int             `json:"trades"`
	Warmup  int             `json:"warmup"`
	Returns Returns         `json:"returns,omitempty"`
	Blocks  Blocks          `json:"blocks,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// BlockStat is one block of a combination's per-bar returns: the count,
// sum and sum of squares (backtest.BlockStat).
type BlockStat = backtest.BlockStat

// Blocks are a trial's returns in blocks. On the wire they are one
// base64 string of little-endian fields, per block its count (4 bytes)
// and its sum and sum of squares (8-byte IEEE 754 each): exact, and far
// cheaper to read and write than three JSON numbers a block, which were
// most of a trial's bytes. The array form ([{"n":..,"s":..,"q":..}])
// reads too.
type Blocks []BlockStat

// blockBytes is one block's size on the wire before base64.
const blockBytes = 4 + 8 + 8

// MarshalJSON writes b as one base64 string.
func (b Blocks) MarshalJSON() ([]byte, error) {
	raw := make([]byte, 0, blockBytes*len(b))
	for _, x := range b {
		if x.N < 0 || x.N > math.MaxUint32 {
			return nil, fmt.Errorf("block of %d returns", x.N)
		}
		raw = binary.LittleEndian.AppendUint32(raw, uint32(x.N))
		raw = binary.LittleEndian.AppendUint64(raw, math.Float64bits(x.Sum))
		raw = binary.LittleEndian.AppendUint64(raw, math.Float64bits(x.SumSq))
	}
	out := make([]byte, 0, base64.StdEncoding.EncodedLen(len(raw))+2)
	out = append(out, '"')
	out = base64.StdEncoding.AppendEncode(out, raw)
	return append(out, '"'), nil
}

// UnmarshalJSON reads the base64 string MarshalJSON writes, or an array
// of blocks.
func (b *Blocks) UnmarshalJSON(data []byte) error {
	switch {
	case string(data) == "null":
		*b = nil
		return nil
	case len(data) > 0 && data[0] == '[':
		return json.Unmarshal(data, (*[]BlockStat)(b))
	case len(data) < 2 || data[0] != '"' || data[len(data)-1] != '"':
		return fmt.Errorf("blocks: want a base64 string or an array, got %.20q", data)
	}
	raw, err := base64.StdEncoding.AppendDecode(nil, data[1:len(data)-1])
	if err != nil {
		return fmt.Errorf("blocks: %w", err)
	}
	if len(raw)%blockBytes != 0 {
		return fmt.Errorf("blocks: %d bytes is not a whole number of %d-byte blocks", len(raw), blockBytes)
	}
	out := make(Blocks, len(raw)/blockBytes)
	for i := range out {
		r := raw[i*blockBytes:]
		out[i] = BlockStat{
			N:     int(binary.LittleEndian.Uint32(r)),
			Sum:   math.Float64frombits(binary.LittleEndian.Uint64(r[4:])),
			SumSq: math.Float64frombits(binary.LittleEndian.Uint64(r[12:])),
		}
	}
	*b = out
	return nil
}

// BlockStats cuts returns into s equal blocks, leaving out the oldest
// len(returns) mod s; nil when there are fewer than 2 returns per block.
func BlockStats(returns []float64, s int) []BlockStat { return backtest.BlockStats(returns, s) }

// Scores are the rank metrics, full precision; NaN is null on the wire.
type Scores struct {
	Sharpe       Num `json:"sharpe"`
	CAGR         Num `json:"cagr"`
	Calmar       Num `json:"calmar"`
	ProfitFactor Num `json:"profit_factor"`
	TotalReturn  Num `json:"total_return"`
	MaxDrawdown  Num `json:"max_drawdown"`
	// For pooling a series set's results.
	Sortino  Num `json:"sortino"`
	WinRate  Num `json:"win_rate"`
	Exposure Num `json:"exposure"`
}

// ReturnStats describe a run's per-bar returns for the deflated Sharpe
// ratio: the per-period Sharpe ratio, skewness, non-excess kurtosis and
// the number of returns.
type ReturnStats struct {
	SR   Num `json:"sr"`
	Skew Num `json:"skew"`
	Kurt Num `json:"kurt"`
	T    int `json:"t"`
}

// Num is a float64 whose NaN and infinities cross JSON as null.
type Num float64

// MarshalJSON writes NaN and infinities as null, and other values as
// encoding/json writes a float64 (the shortest form that reads back
// exactly), without its reflection: a sweep sends a dozen per trial.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b := strconv.AppendFloat(make([]byte, 0, 24), f, format, -1, 64)
	if format == 'e' {
		// e-09 is e-9, as encoding/json writes it.
		if k := len(b); k >= 4 && b[k-4] == 'e' && b[k-3] == '-' && b[k-2] == '0' {
			b[k-2] = b[k-1]
			b = b[:k-1]
		}
	}
	return b, nil
}

// UnmarshalJSON reads null as NaN, and a number as encoding/json reads a
// float64.
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num(math.NaN())
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("worker: %q is not a number", b)
	}
	*n = Num(f)
	return nil
}

// StatsOf computes ReturnStats from the moments of the returns: SR =
// mean/std (ddof 1); skewness and kurtosis from the population moments
// m3/m2^1.5 and m4/m2^2.
func StatsOf(m backtest.Moments) ReturnStats {
	t := m.T
	st := ReturnStats{SR: Num(math.NaN()), Skew: Num(math.NaN()), Kurt: Num(math.NaN()), T: t}
	if t < 2 || m.M2 == 0 {
		return st
	}
	sd := math.Sqrt(m.M2 / float64(t-1))
	st.SR = Num(m.Mean / sd)
	m2, m3, m4 := m.M2/float64(t), m.M3/float64(t), m.M4/float64(t)
	st.Skew = Num(m3 / math.Pow(m2, 1.5))
	st.Kurt = Num(m4 / (m2 * m2))
	return st
}

// Sweep runs a chunk of combinations in a worker.
func (p *Pool) Sweep(ctx context.Context, req SweepChunk) (SweepChunkResult, error) {
	return Call[SweepChunk, SweepChunkResult](ctx, p, KindSweep, req)
}
