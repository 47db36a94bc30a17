package backtest

import (
	"math"

	"wicket/internal/intrabar"
	"wicket/strategy"
)

// Protective orders in a backtest: a position opened with Exits rests
// with a stop-loss (a stop-limit with Exits.StopLimit), a take-profit and
// a trailing stop (the ones asked for, in one group: an OCO, the first to
// fill cancels the rest), priced from the position's average entry. Each
// bar's path walks through them by the run's intrabar rule
// (internal/intrabar, the rule the paper venue uses); a fill closes the
// position at its price, with slippage on a stop (a taker) and none on a
// take-profit or a stop-limit (limits). A stop-limit whose stop traded
// and whose limit the price left behind rests, triggered, as a limit.

// exitKind says which of a position's exits a resting leg is.
type exitKind uint8

const (
	exitStopLoss exitKind = iota
	exitTakeProfit
	exitTrailingStop
	exitStopLimit
)

// exitNames name the exits as trades report them.
var exitNames = [...]string{exitStopLoss: "stop_loss", exitTakeProfit: "take_profit", exitTrailingStop: "trailing_stop", exitStopLimit: "stop_limit"}

// place sets the resting exits for the position the latest fill left:
// none when flat or when e asks for none; else e's legs around the
// average entry price (the book keeps it exact, strategy/book).
func (s *sim) place(e strategy.Exits) {
	s.legs = s.legs[:0]
	s.legKind = s.legKind[:0]
	s.exits = e
	if s.held.Qty == 0 || !e.Any() || !s.held.Trip.Active || s.held.Trip.QtyIn == 0 {
		s.exitBand()
		return
	}
	entry := s.held.Trip.Entry // exact: a stop at the low is reached
	long := s.held.Qty > 0
	exit := intrabar.Sell
	sign := 1.0 // the winning direction
	if !long {
		exit, sign = intrabar.Buy, -1
	}
	type F = intrabar.Float
	add := func(kind exitKind, o intrabar.Order[F]) {
		o.Group = 1
		s.legs = append(s.legs, o)
		s.legKind = append(s.legKind, kind)
	}
	switch {
	case e.StopLoss != 0 && e.StopLimit != 0:
		add(exitStopLimit, intrabar.Order[F]{Kind: intrabar.StopLimit, Side: exit, Stop: F(entry * (1 - sign*e.StopLoss)), Limit: F(entry * (1 - sign*e.StopLimit))})
	case e.StopLoss != 0:
		add(exitStopLoss, intrabar.Order[F]{Kind: intrabar.Stop, Side: exit, Stop: F(entry * (1 - sign*e.StopLoss))})
	}
	if e.TakeProfit != 0 {
		add(exitTakeProfit, intrabar.Order[F]{Kind: intrabar.Limit, Side: exit, Limit: F(entry * (1 + sign*e.TakeProfit))})
	}
	if e.TrailingStop != 0 {
		add(exitTrailingStop, intrabar.Trailing(exit, F(e.TrailingStop), true, F(entry)))
	}
	s.exitBand()
}

// exitBand sets the prices between which a bar reaches none of the
// resting exits (low above lo and high below hi), so the tight loops can
// skip such bars; a trailing stop moves with the path and has no band.
func (s *sim) exitBand() {
	s.bandLo, s.bandHi = math.Inf(-1), math.Inf(1)
	for _, o := range s.legs {
		switch {
		case o.Kind == intrabar.TrailingStop || o.Kind == intrabar.StopLimit:
			// A trailing stop moves with the path; a stop-limit, once
			// triggered, rests as a limit on the other side.
			s.bandLo, s.bandHi = math.Inf(1), math.Inf(-1)
			return
		case (o.Kind == intrabar.Stop) == (o.Side == intrabar.Sell): // reached from above
			level := float64(o.Stop)
			if o.Kind == intrabar.Limit {
				level = float64(o.Limit)
			}
			s.bandLo = max(s.bandLo, level)
		default: // reached from below
			level := float64(o.Limit)
			if o.Kind == intrabar.Stop {
				level = float64(o.Stop)
			}
			s.bandHi = min(s.bandHi, level)
		}
	}
}

// protect walks bar i's path through the resting exits; the first to fill
// closes the position at its price.
func (s *sim) protect(i int) error {
	b := &s.bars
	o, h, l, c := b.Open[i], b.High[i], b.Low[i], b.Close[i]
	if !(l <= min(o, c) && h >= max(o, c) && l > 0 && h <= math.MaxFloat64) {
		return invalidf("bar %d (%s) has open %v, high %v, low %v, close %v; protective orders need a high and a low that contain the open and the close", i, timeString(b.Time[i]), o, h, l, c)
	}
	s.fills = intrabar.Step(intrabar.Bar[intrabar.Float]{Open: intrabar.Float(o), High: intrabar.Float(h), Low: intrabar.Float(l), Close: intrabar.Float(c)}, s.rule, s.legs, s.fills[:0])
	if len(s.fills) == 0 {
		return nil
	}
	f := s.fills[0]
	slip := 0.0
	if f.Taker {
		slip = s.slip
	}
	s.exitAs = exitNames[s.legKind[f.Order]]
	s.fillAt(i, float64(f.Price), -s.held.Qty, slip, s.fee)
	s.exitAs = ""
	s.target = 0
	s.legs, s.legKind = s.legs[:0], s.legKind[:0]
	s.exitBand()
	return nil
}
