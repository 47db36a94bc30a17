package project

import (
	"fmt"
	"time"

	"github.com/shopspring/decimal"
)

// Risk is wicket.toml's [risk] table: the node's pre-trade limits beyond
// [guardrail] (node/guardrail checks them on every write, whoever sends
// it), its throttles, and the dead man's switch. Every limit left at zero
// is off.
type Risk struct {
	// Heartbeat is how long the node trades without an operator's
	// heartbeat (wicket node heartbeat) before its dead man's switch
	// pauses the auto deployments; 0: no dead man's switch.
	Heartbeat time.Duration `toml:"heartbeat"`
	// OnSilence is what the switch does besides pausing: "pause" (the
	// default) or "cancel" (also cancel the paused deployments' working
	// orders).
	OnSilence string `toml:"on_silence"`
	// StreamLoss is how long a real venue's order stream may stay lost
	// before the node does for that venue what the dead man's switch
	// does (pause its auto deployments, and with on_silence = "cancel"
	// cancel their working orders); 0: never.
	StreamLoss time.Duration `toml:"stream_loss"`
	// StopCollarPct refuses a stop or stop_limit whose stop is further
	// than this percent from the live mark.
	StopCollarPct float64 `toml:"stop_collar_pct"`
	// MessageWindow is the window the message throttles count in
	// (submits, modifies and cancels); default 1s.
	MessageWindow time.Duration `toml:"message_window"`
	// MaxMessages is the most messages per venue in a window.
	MaxMessages int `toml:"max_messages"`
	// MaxDeploymentMessages is the most messages one deployment sends in
	// a window.
	MaxDeploymentMessages int `toml:"max_deployment_messages"`
	// MaxIdenticalOrders is the most identical orders (venue, symbol,
	// side, type, quantity and prices) within IdenticalWindow (default
	// 1m); the next is refused, and so is every identical one after it
	// until an operator resets the throttle (wicket node reset-throttle).
	MaxIdenticalOrders int           `toml:"max_identical_orders"`
	IdenticalWindow    time.Duration `toml:"identical_window"`
	// SelfTrade refuses an order that would cross the account's own
	// resting order on the same venue and symbol (Binance is told
	// selfTradePreventionMode instead, and expires the taker itself).
	SelfTrade bool `toml:"self_trade"`
	// MarketHours refuses an equity order at a venue whose market clock
	// (Alpaca's) says the market is closed, naming when it opens.
	MarketHours bool `toml:"market_hours"`
	// Symbols are per-symbol limits, by symbol.
	Symbols map[string]SymbolRisk `toml:"symbols"`
	// Venues are per-venue limits, by venue name.
	Venues map[string]VenueRisk `toml:"venues"`
}

// SymbolRisk is one symbol's limits ([risk.symbols."BTC-USD"]), on every
// venue that lists it.
type SymbolRisk struct {
	MaxOrderQuantity decimal.Decimal `toml:"max_order_quantity"`
	MaxOrderNotional decimal.Decimal `toml:"max_order_notional"`
	MaxPosition      decimal.Decimal `toml:"max_position"` // quantity, long or short
}

// VenueRisk is one venue's limits ([risk.venues.NAME]).
type VenueRisk struct {
	// MaxDailyNotional bounds the notional the venue trades in a UTC day:
	// its fills so far plus the order checked.
	MaxDailyNotional decimal.Decimal `toml:"max_daily_notional"`
}

// Defaults of [risk].
const (
	DefaultMessageWindow   = time.Second
	DefaultIdenticalWindow = time.Minute
	OnSilencePause         = "pause"
	OnSilenceCancel        = "cancel"
)

// MinHeartbeat is the shortest heartbeat the node accepts.
const MinHeartbeat = time.Minute

func (r *Risk) validate(venues []Venue) error {
	switch {
	case r.Heartbeat < 0 || (r.Heartbeat > 0 && r.Heartbeat < MinHeartbeat):
		return fmt.Errorf("risk.heartbeat %s: give a duration of at least %s such as \"15m\", or leave it out for no dead man's switch", r.Heartbeat, MinHeartbeat)
	case r.StreamLoss < 0 || (r.StreamLoss > 0 && r.StreamLoss < 10*time.Second):
		return fmt.Errorf("risk.stream_loss %s: give a duration of at least 10s such as \"2m\", or leave it out", r.StreamLoss)
	case r.OnSilence != "" && r.OnSilence != OnSilencePause && r.OnSilence != OnSilenceCancel:
		return fmt.Errorf("risk.on_silence %q: give %q or %q", r.OnSilence, OnSilencePause, OnSilenceCancel)
	case r.StopCollarPct < 0 || r.StopCollarPct > 100:
		return fmt.Errorf("risk.stop_collar_pct %v must be in [0, 100]", r.StopCollarPct)
	case r.MessageWindow < 0 || r.IdenticalWindow < 0:
		return fmt.Errorf("risk.message_window and risk.identical_window must not be negative")
	case r.MaxMessages < 0 || r.MaxDeploymentMessages < 0 || r.MaxIdenticalOrders < 0:
		return fmt.Errorf("risk.max_messages, risk.max_deployment_messages and risk.max_identical_orders must not be negative")
	}
	if r.OnSilence == "" {
		r.OnSilence = OnSilencePause
	}
	if r.MessageWindow == 0 {
		r.MessageWindow = DefaultMessageWindow
	}
	if r.IdenticalWindow == 0 {
		r.IdenticalWindow = DefaultIdenticalWindow
	}
	for sym, l := range r.Symbols {
		if err := ValidName("risk.symbols symbol", sym); err != nil {
			return err
		}
		if l.MaxOrderQuantity.IsNegative() || l.MaxOrderNotional.IsNegative() || l.MaxPosition.IsNegative() {
			return fmt.Errorf("risk.symbols.%s: limits must not be negative (0 or left out: no limit)", sym)
		}
	}
	for name, l := range r.Venues {
		found := false
		for _, v := range venues {
			found = found || v.Name == name
		}
		if !found {
			return fmt.Errorf("risk.venues.%s: no [[venues]] table is named %s", name, name)
		}
		if l.MaxDailyNotional.IsNegative() {
			return fmt.Errorf("risk.venues.%s.max_daily_notional must not be negative", name)
		}
	}
	return nil
}
