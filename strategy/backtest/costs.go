package backtest

import (
	"fmt"
	"math"
	"strings"

	"wicket/strategy"
	"wicket/strategy/book"
)

// Costs beyond fee and slippage, each off in the zero value, so a run
// without them is exactly a run before they existed (same fills, same
// figures, same fast loops). The rules, stated once (docs/strategies.md,
// "Costs", says the same):
//
//   - Funding: a settlement at time t belongs to the bar whose span holds
//     it (open time <= t < the next bar's open time, or the bar length for
//     the last bar: strategy/book's FundingEnd, the portfolio's rule too),
//     so one inside a gap of the bars is charged before the gap. It is charged at that bar's open, after the open's
//     fill, on the position then held: cash -= position × open × rate, so
//     a long pays a positive rate and a short receives it. Settlements
//     outside the bars are not charged.
//   - Borrow: a short held at a bar's close pays BorrowRate (annual) on
//     its notional at that close for the time since the previous bar's
//     close (the bar length for the first bar), over a 365-day year.
//   - Margin: with Leverage set, a position holds isolated margin of its
//     entry notional / Leverage (sizing is unchanged: targets stay
//     fractions of equity). It is liquidated where its equity falls to
//     the maintenance margin on its notional at that price (the venue's
//     rule, strategy/book's LiquidationPrice, one bracket):
//     long:  entry × (1 − 1/Leverage) / (1 − MaintenanceMargin)
//     short: entry × (1 + 1/Leverage) / (1 + MaintenanceMargin)
//     (entry: the position's average entry price) by the first bar whose
//     low (long) or high (short) reaches that price, after the bar's
//     protective exits: it fills there, or at the open when the bar opens
//     beyond it, with no fee or slippage, and the trader loses exactly the
//     margin (what the fill leaves of it goes to the venue).
//   - Volume cap: with MaxVolumePct set, a decision's fill is at most that
//     percent of its bar's volume; the rest is carried to the next bar
//     (VolumeCarry, the default, until filled or superseded by a new
//     decision) or dropped (VolumeDrop). Protective exits and liquidations
//     are not capped. A series whose volume is 0 on every bar is not
//     capped (the run warns that it could not be). A request's costs
//     (CostOptions) turn the cap on at DefaultMaxVolumePct unless they ask
//     for VolumeOff; the zero Costs of a Go caller leave it off.
type Costs struct {
	// Funding charges FundingRates (sorted by time) when set; with it
	// set and no rates in the run's span, nothing is charged and the
	// metric still reports 0.
	Funding      bool
	FundingRates []FundingRate
	// BorrowRate is the annual borrow rate of a short (0.05 is 5%).
	BorrowRate float64
	// Leverage, above 0, turns on isolated margin and liquidation;
	// MaintenanceMargin is the fraction of notional the venue keeps
	// (below 1/Leverage).
	Leverage          float64
	MaintenanceMargin float64
	// MaxVolumePct, above 0, caps a fill at that percent of the bar's
	// volume; VolumeCap says what becomes of the rest.
	MaxVolumePct float64
	VolumeCap    VolumeCap
}

// FundingRate is one funding settlement: its time (unix seconds) and its
// rate (0.0001 is 0.01%), positive when longs pay shorts.
type FundingRate struct {
	Time int64
	Rate float64
}

// VolumeCap is what a capped fill does with the rest of its quantity.
type VolumeCap uint8

// Volume cap modes.
const (
	VolumeCarry VolumeCap = iota // the rest is carried to the next bar (the default)
	VolumeDrop                   // the rest is dropped
	VolumeOff                    // no cap: asked for in so many words
)

// DefaultMaxVolumePct is the participation cap a request runs under when
// it names none and does not turn the cap off: a fill takes at most this
// percent of its bar's volume.
const DefaultMaxVolumePct = 10.0

func (v VolumeCap) String() string {
	switch v {
	case VolumeCarry:
		return "carry"
	case VolumeDrop:
		return "drop"
	case VolumeOff:
		return "off"
	}
	return fmt.Sprintf("VolumeCap(%d)", uint8(v))
}

// ParseVolumeCap reads "carry" (or ""), "drop" and "off".
func ParseVolumeCap(s string) (VolumeCap, error) {
	switch strings.TrimSpace(s) {
	case "", "carry":
		return VolumeCarry, nil
	case "drop":
		return VolumeDrop, nil
	case "off":
		return VolumeOff, nil
	}
	return 0, invalidf("volume_cap %q is not one of carry, drop, off", s)
}

// DefaultMaintenanceMargin is the maintenance margin a run with leverage
// and no maintenance_margin uses (0.5% of notional).
const DefaultMaintenanceMargin = 0.005

// MaxLeverage bounds Leverage.
const MaxLeverage = 125

// Charged says which of the costs a run charged, so a report names
// exactly those (and a run with none reports as before).
type Charged uint8

// The costs a run may charge.
const (
	ChargedFunding Charged = 1 << iota
	ChargedBorrow
	ChargedMargin
	ChargedVolume
)

// charged is the set c turns on.
func (c Costs) charged() Charged {
	var k Charged
	if c.Funding {
		k |= ChargedFunding
	}
	if c.BorrowRate != 0 {
		k |= ChargedBorrow
	}
	if c.Leverage != 0 {
		k |= ChargedMargin
	}
	if c.MaxVolumePct != 0 {
		k |= ChargedVolume
	}
	return k
}

// Charged is the set of costs c turns on: what a run's metrics report.
func (c Costs) Charged() Charged { return c.charged() }

// Check validates c.
func (c Costs) Check() error {
	switch {
	case !(c.BorrowRate >= 0 && c.BorrowRate <= 10):
		return invalidf("borrow_rate %v must be an annual fraction from 0 to 10 (0.05 is 5%% a year)", c.BorrowRate)
	case !(c.Leverage >= 0 && c.Leverage <= MaxLeverage) || (c.Leverage > 0 && c.Leverage < 1):
		return invalidf("leverage %v must be from 1 to %d (or 0 for no margin model)", c.Leverage, MaxLeverage)
	case !(c.MaintenanceMargin >= 0):
		return invalidf("maintenance_margin %v must be a fraction of at least 0 (0.005 is 0.5%%)", c.MaintenanceMargin)
	case c.Leverage > 0 && c.MaintenanceMargin >= 1/c.Leverage:
		return invalidf("maintenance_margin %v must be below 1/leverage (%v), or every position is liquidated as it opens", c.MaintenanceMargin, 1/c.Leverage)
	case c.Leverage == 0 && c.MaintenanceMargin != 0:
		return invalidf("maintenance_margin needs leverage: set leverage (1 to %d) for the margin model", MaxLeverage)
	case !(c.MaxVolumePct >= 0 && c.MaxVolumePct <= 100):
		return invalidf("max_volume_pct %v must be a percent above 0 and at most 100", c.MaxVolumePct)
	case c.VolumeCap != VolumeCarry && c.VolumeCap != VolumeDrop && c.VolumeCap != VolumeOff:
		return invalidf("unknown volume_cap %v", c.VolumeCap)
	case c.VolumeCap == VolumeOff && c.MaxVolumePct != 0:
		return invalidf("volume_cap off and max_volume_pct %v contradict each other; leave one out", c.MaxVolumePct)
	}
	for i, f := range c.FundingRates {
		if math.IsNaN(f.Rate) || math.Abs(f.Rate) >= 1 {
			return invalidf("funding rate %v at %s is not a fraction between -1 and 1", f.Rate, timeString(f.Time))
		}
		if i > 0 && f.Time <= c.FundingRates[i-1].Time {
			return invalidf("funding settlements out of order at %s; they must rise in time", timeString(f.Time))
		}
	}
	return nil
}

// CostOptions are the costs as a request asks for them: plain JSON, so
// they travel from the CLI and the MCP tools through research requests and
// sweep chunks to the worker that runs the engine. Absent fields are off.
type CostOptions struct {
	// Funding: nil charges funding when the history store holds the
	// symbol's funding rates; true requires them; false never charges.
	Funding           *bool    `json:"funding,omitempty"`
	BorrowRate        *float64 `json:"borrow_rate,omitempty"`
	Leverage          *float64 `json:"leverage,omitempty"`
	MaintenanceMargin *float64 `json:"maintenance_margin,omitempty"`
	// MaxVolumePct nil caps at DefaultMaxVolumePct unless VolumeCap is
	// "off".
	MaxVolumePct *float64 `json:"max_volume_pct,omitempty"`
	VolumeCap    string   `json:"volume_cap,omitempty"` // carry (default), drop or off
}

// Asked reports whether any cost beyond fee and slippage is asked for
// (funding required, a borrow rate, leverage, a volume cap named): what a
// run that cannot charge them must refuse rather than ignore. The default
// volume cap and turning it off are not asked-for costs.
func (o CostOptions) Asked() bool {
	return (o.Funding != nil && *o.Funding) || o.BorrowRate != nil || o.Leverage != nil || o.MaintenanceMargin != nil ||
		o.MaxVolumePct != nil || (o.VolumeCap != "" && strings.TrimSpace(o.VolumeCap) != "off")
}

// Costs turns the options into Costs (funding rates aside: the caller
// that reads the store sets them, see FundingWanted), checked.
func (o CostOptions) Costs() (Costs, error) {
	var c Costs
	if o.BorrowRate != nil {
		c.BorrowRate = *o.BorrowRate
	}
	if o.Leverage != nil {
		c.Leverage = *o.Leverage
		c.MaintenanceMargin = DefaultMaintenanceMargin
	}
	if o.MaintenanceMargin != nil {
		c.MaintenanceMargin = *o.MaintenanceMargin
	}
	var err error
	if c.VolumeCap, err = ParseVolumeCap(o.VolumeCap); err != nil {
		return c, err
	}
	switch {
	case c.VolumeCap == VolumeOff && o.MaxVolumePct != nil:
		return c, invalidf("volume_cap off and max_volume_pct %v contradict each other; leave one out", *o.MaxVolumePct)
	case o.MaxVolumePct != nil:
		c.MaxVolumePct = *o.MaxVolumePct
		if c.MaxVolumePct == 0 {
			return c, invalidf("max_volume_pct 0 would fill nothing; give a percent above 0, or volume_cap off for no cap")
		}
	case c.VolumeCap != VolumeOff:
		c.MaxVolumePct = DefaultMaxVolumePct
	}
	return c, c.Check()
}

// FundingWanted says whether a run asks for funding: "auto" (nil, when
// the store has rates), "on" (they must exist) or "off".
func (o CostOptions) FundingWanted() string {
	switch {
	case o.Funding == nil:
		return "auto"
	case *o.Funding:
		return "on"
	}
	return "off"
}

// costState is a run's costs as the engine charges them.
type costState struct {
	on        bool // any cost: the bar-by-bar path runs the opening and in-bar costs
	perBar    bool // a cost charged every bar held (funding, borrow, margin): the in-position fast loop is off
	funding   bool
	rates     []FundingRate
	next      int     // the first settlement not yet passed
	borrow    float64 // BorrowRate per second
	lev, mm   float64
	volPct    float64 // a fraction of the bar's volume; 0: no cap
	volDrop   bool
	carry     float64 // a capped fill's rest, to fill at a later bar
	carryFrom int     // the bar that capped it
	barSecs   int64
	charged   Charged
	paidFund  float64
	paidBorr  float64
	liqs      int
	capped    int
	// The participation of the run's orders (decisions, not protective
	// exits) in their bar's volume, tracked with or without a cap.
	noVolume bool    // the volume is 0 on every bar: nothing could be capped
	volOff   bool    // the cap was turned off
	over     int     // orders above the cap (DefaultMaxVolumePct when off)
	maxPart  float64 // the largest order's share of its bar's volume
	maxAt    int     // its bar
	carrying bool    // a carried rest is filling: not a new order
}

func newCostState(c Costs, barSecs int64, volume []float64) costState {
	cs := costState{
		on:      c.charged() != 0,
		perBar:  c.Funding || c.BorrowRate != 0 || c.Leverage != 0,
		funding: c.Funding, rates: c.FundingRates,
		borrow: c.BorrowRate / (365 * 86400),
		lev:    c.Leverage, mm: c.MaintenanceMargin,
		volPct: c.MaxVolumePct / 100, volDrop: c.VolumeCap == VolumeDrop,
		volOff:  c.VolumeCap == VolumeOff,
		barSecs: barSecs, charged: c.charged(), maxAt: -1,
	}
	cs.noVolume = true
	for _, v := range volume {
		if v != 0 {
			cs.noVolume = false
			break
		}
	}
	if cs.noVolume {
		cs.volPct = 0 // no volume to take a share of: not capped, and the run says so
	}
	return cs
}

// participate notes an order of dq on bar i against its bar's volume.
func (s *sim) participate(i int, dq float64) {
	v := s.bars.Volume[i]
	if dq == 0 || !(v > 0) || s.cost.carrying {
		return
	}
	p := math.Abs(dq) / v
	lim := s.cost.volPct
	if lim == 0 {
		lim = DefaultMaxVolumePct / 100
	}
	if p > lim {
		s.cost.over++
	}
	if p > s.cost.maxPart {
		s.cost.maxPart, s.cost.maxAt = p, i
	}
}

// atOpen runs bar i's opening costs, after the open's own fill: a rest
// carried from an earlier bar fills (a new decision clears it), then the funding
// settlements in the bar's span are charged at the open.
func (s *sim) atOpen(i int, o float64) {
	if s.cost.carry != 0 && s.fillNext && s.cost.carryFrom < i {
		s.fillCarry(i, i-1, o)
	}
	if !s.cost.funding {
		return
	}
	t := s.bars.Time
	var next int64
	if i+1 < len(t) {
		next = t[i+1]
	}
	end := book.FundingEnd(t[i], next, i+1 < len(t), s.cost.barSecs)
	rates := s.cost.rates
	k := s.cost.next
	for k < len(rates) && rates[k].Time < end {
		if rates[k].Time >= t[i] && s.held.Qty != 0 {
			amt := s.held.Qty * o * rates[k].Rate
			s.acct.Charge(&s.held, amt)
			s.cost.paidFund += amt
		}
		k++
	}
	s.cost.next = k
}

// inBar runs bar i's costs after its protective exits: a liquidation, and
// the borrow on a short held at the close.
func (s *sim) inBar(i int) error {
	b := &s.bars
	if s.cost.lev > 0 && s.held.Qty != 0 && s.held.Trip.Active && s.held.Trip.QtyIn > 0 {
		o, h, l, c := b.Open[i], b.High[i], b.Low[i], b.Close[i]
		if !(l <= min(o, c) && h >= max(o, c) && l > 0 && h <= math.MaxFloat64) {
			return invalidf("bar %d (%s) has open %v, high %v, low %v, close %v; the margin model needs a high and a low that contain the open and the close", i, timeString(b.Time[i]), o, h, l, c)
		}
		entry := s.held.Trip.Entry
		liq := book.LiquidationPrice(s.held.Qty, entry, s.cost.lev, book.SingleBracket(s.cost.mm))
		if s.held.Qty > 0 {
			if l <= liq {
				s.liquidate(i, min(o, liq), entry)
			}
		} else if h >= liq {
			s.liquidate(i, max(o, liq), entry)
		}
	}
	if s.cost.borrow > 0 && s.held.Qty < 0 {
		dt := s.cost.barSecs
		if i > 0 {
			dt = b.Time[i] - b.Time[i-1]
		}
		amt := -s.held.Qty * b.Close[i] * s.cost.borrow * float64(dt)
		s.acct.Charge(&s.held, amt)
		s.cost.paidBorr += amt
	}
	return nil
}

// liquidate closes the position at px on bar i: no fee or slippage, and
// what the fill leaves of the margin goes to the venue.
func (s *sim) liquidate(i int, px, entry float64) {
	qty := math.Abs(s.held.Qty)
	side := 1.0
	if s.held.Qty < 0 {
		side = -1
	}
	margin := qty * entry / s.cost.lev
	forfeit := margin + side*(px-entry)*qty
	s.acct.Charge(&s.held, forfeit)
	s.exitAs = "liquidation"
	s.fillAt(i, px, -s.held.Qty, 0, 0)
	s.exitAs = ""
	s.target = 0
	s.cost.carry = 0
	s.cost.liqs++
	s.legs, s.legKind = s.legs[:0], s.legKind[:0]
	s.exitBand()
}

// capFill caps a decision's fill dq on bar i at the volume cap, keeping
// the rest to carry (or dropping it).
func (s *sim) capFill(i int, dq float64) float64 {
	lim := s.cost.volPct * s.bars.Volume[i]
	if !(math.Abs(dq) > lim) {
		return dq
	}
	s.cost.capped++
	capped := math.Copysign(max(lim, 0), dq)
	if !s.cost.volDrop {
		s.cost.carry, s.cost.carryFrom = dq-capped, i
	}
	return capped
}

// fillCarry fills a carried rest at price p on bar i (capped again), as
// an order of bar dec (i, or the bar before when it fills at the open).
func (s *sim) fillCarry(i, dec int, p float64) {
	q := s.cost.carry
	s.cost.carry = 0
	s.cost.carrying = true
	s.apply(i, dec, p, strategy.Intent{Kind: strategy.Qty, Value: q, Exits: s.exits})
	s.cost.carrying = false
}

// costWarnings are the warnings of a run's costs.
func (s *sim) costWarnings() []string {
	var w []string
	largest := ""
	if s.cost.maxAt >= 0 {
		largest = fmt.Sprintf("; the largest order asked for %s its bar's volume (%s)", fmtShare(s.cost.maxPart), timeString(s.bars.Time[s.cost.maxAt]))
	}
	switch {
	case s.cost.capped > 0:
		rest := "carried to the next bar"
		if s.cost.volDrop {
			rest = "dropped"
		}
		w = append(w, fmt.Sprintf("volume cap: %d fills were capped at %v%% of their bar's volume and the rest %s (%d orders exceeded the cap%s); the strategy trades more than the market it models can absorb", s.cost.capped, s.cost.volPct*100, rest, s.cost.over, largest))
	case s.cost.volOff && s.cost.over > 0:
		w = append(w, fmt.Sprintf("volume cap off: %d orders took more than %v%% of their bar's volume%s; the fills assume a market that absorbs them (drop volume_cap off to cap them)", s.cost.over, float64(DefaultMaxVolumePct), largest))
	}
	if s.cost.noVolume && (s.cost.charged&ChargedVolume != 0 || s.cost.volOff) && s.entered {
		w = append(w, "volume cap: the series has no volume (0 on every bar), so no fill was capped; nothing says the market could absorb the strategy's orders")
	}
	if s.cost.liqs > 0 {
		w = append(w, fmt.Sprintf("liquidated %d times: a position's loss reached its isolated margin (leverage %v, maintenance margin %v)", s.cost.liqs, s.cost.lev, s.cost.mm))
	}
	if s.cost.funding && len(s.cost.rates) == 0 {
		w = append(w, "funding: no funding settlements fall inside the run; fetch them with `wicket data fetch --funding SYMBOL`")
	}
	return w
}

// fmtShare is a share of a bar's volume: a percent below 10x, a multiple
// above.
func fmtShare(p float64) string {
	if p >= 10 {
		return fmt.Sprintf("%.0fx", p)
	}
	return fmt.Sprintf("%.3g%% of", p*100)
}
