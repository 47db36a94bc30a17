package backtest

import (
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"wicket/internal/intrabar"
	"wicket/strategy"
)

// Fill says at which price a decision fills.
type Fill uint8

// Fill models.
const (
	// FillNextOpen fills a decision taken at bar i's close at bar i+1's
	// open: what a live strategy can actually do. The default.
	FillNextOpen Fill = iota
	// FillClose fills at the close of the deciding bar itself. It is
	// optimistic (no live strategy trades at the price it just observed)
	// and every result that uses it carries a warning.
	FillClose
)

func (f Fill) String() string {
	switch f {
	case FillNextOpen:
		return "next_open"
	case FillClose:
		return "close"
	}
	return fmt.Sprintf("Fill(%d)", uint8(f))
}

// ParseFill reads "next_open" (or "open", or "") and "close".
func ParseFill(s string) (Fill, error) {
	switch s {
	case "", "next_open", "open":
		return FillNextOpen, nil
	case "close":
		return FillClose, nil
	}
	return 0, &Error{Kind: KindInvalid, Msg: fmt.Sprintf("fill %q is not one of next_open, close", s)}
}

// Trade list bounds.
const (
	DefaultTradesLimit = 50
	MaxTradesLimit     = 500
)

// MaxEquityPoints bounds the equity curve a Result reports (the full curve
// stays available in memory as Result.Curve).
const MaxEquityPoints = 500

// Config is everything about a backtest except the bars and the strategy.
type Config struct {
	Capital     decimal.Decimal // starting cash; must be positive
	FeeBps      float64         // charged on each fill's notional
	SlippageBps float64         // moves each fill's price against the trader
	Fill        Fill
	// Intrabar is how a bar's path fills protective orders (stops,
	// limits, trailing stops): path by default, or pessimistic.
	Intrabar intrabar.Rule
	// Granularity annualises the metrics; empty means the one in
	// bars.Series.
	Granularity strategy.Granularity
	// Warmup is how many bars the strategy needs before it can decide
	// anything; only used to warn when the range is shorter.
	Warmup int
	// TradesLimit bounds Result.Trades: 0 means DefaultTradesLimit, more
	// than MaxTradesLimit is clamped with a note.
	TradesLimit int
	// From and To are the range the caller asked for (zero: open); when
	// the bars start later or end earlier, the result warns that the range
	// was clipped to the data.
	From, To time.Time
	// Params are the strategy parameters of the run, echoed in the result.
	Params map[string]any
	// Allowance, when set, applies a deployment's sizing limits and
	// breakers to the run (allowance.go); nil runs unchanged.
	Allowance *Allowance
	// Costs are the charges beyond fee and slippage (costs.go): funding,
	// borrow, isolated margin and a volume cap; the zero value has none.
	Costs Costs
	// OnFill, when set, is told each fill the run books, as it books it
	// (a deployment's tracking report sets its live fills against them);
	// it must not keep the run waiting.
	OnFill func(FillEvent)
}

// FillEvent is one fill of a run: bar i's mark it filled at (the open,
// an exit's price, a liquidation's), the signed quantity, the slippage
// and fee rates it was booked with, the fee charged, and the exit it
// was ("" for a decision's order).
type FillEvent struct {
	Bar                   int
	Mark, Qty, Slip, Rate float64
	Fee                   float64
	Exit                  string
}

// DefaultConfig is the spec's defaults: capital 10000, fee 10 bps,
// slippage 5 bps, next-open fills.
func DefaultConfig() Config {
	return Config{Capital: decimal.NewFromInt(10000), FeeBps: 10, SlippageBps: 5}
}

// Stepper is an event-driven strategy: Step is called once per bar, after
// its close, with the account marked at that close, and returns what to do.
type Stepper interface {
	Step(i int, acct strategy.Account) (strategy.Intent, error)
}

// Decisions is what a strategy contributes to a run: exactly one of
// Targets or Signals (vectorised) or Stepper (event-driven).
type Decisions struct {
	// Targets holds one target exposure per bar, as a fraction of equity
	// (negative is short, 0 is flat, NaN is no change).
	Targets []float64
	// Signals are read as their Targets, a block of bars at a time, so a
	// run builds no per-bar target array.
	Signals *strategy.Signals
	Stepper Stepper
}

// Kind classifies an Error.
type Kind uint8

// Error kinds.
const (
	KindInvalid  Kind = iota + 1 // the bars, config or decisions cannot be run
	KindStrategy                 // the Stepper failed at a bar
	KindCanceled                 // the context ended the run
)

func (k Kind) String() string {
	switch k {
	case KindInvalid:
		return "invalid"
	case KindStrategy:
		return "strategy"
	case KindCanceled:
		return "canceled"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Error is the backtest's error type. Msg says what went wrong and what to
// do; Err is the cause (a Stepper's error, the context's error).
type Error struct {
	Kind Kind
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return e.Msg
	}
	return e.Msg + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

func invalidf(format string, a ...any) error {
	return &Error{Kind: KindInvalid, Msg: fmt.Sprintf(format, a...)}
}
