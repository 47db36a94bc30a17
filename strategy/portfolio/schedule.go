package portfolio

import (
	"fmt"
	"math"

	"wicket/strategy/backtest"
	"wicket/strategy/scriptapi"
)

// Schedule is the portfolio's decision rule at a bar, written once: the
// bar's weights (scaled down to 1 when |w| sums past it), the rebalance
// schedule that says when targets are due, and the calendar rule that
// gives a due asset its new weight only at a bar it has (else the target
// waits for its next bar). The engine steps it at every calendar bar it
// trades; a deployment (deploy) steps it at every closed calendar bar, so
// a live portfolio takes the same targets at the same bars as its
// backtest.
type Schedule struct {
	reb   Rebalance
	names []string
	st    ScheduleState
	w     []float64
	take  []bool
	// Clamped counts the bars whose weights were scaled down; ClampedAt
	// is the first (-1: none).
	Clamped, ClampedAt int
}

// ScheduleState is what a Schedule carries from bar to bar, to journal
// (a deployment's restart restores it): which assets still wait for a
// target, the weight each was last given (HasApplied false: none yet) and
// the period of the last scheduled rebalance.
type ScheduleState struct {
	Due        []bool    `json:"due"`
	Applied    []float64 `json:"applied"`
	HasApplied []bool    `json:"has_applied"`
	LastPeriod int64     `json:"last_period"`
	Scheduled  bool      `json:"scheduled"`
}

// NewSchedule is the schedule reb over the assets named names (their
// series, for messages), with nothing due yet.
func NewSchedule(reb Rebalance, names []string) *Schedule {
	m := len(names)
	if reb.Period == "" {
		reb = Rebalance{Period: scriptapi.RebalanceBar, Text: scriptapi.RebalanceBar}
	}
	return &Schedule{reb: reb, names: names, ClampedAt: -1,
		st: ScheduleState{Due: make([]bool, m), Applied: make([]float64, m), HasApplied: make([]bool, m)},
		w:  make([]float64, m), take: make([]bool, m)}
}

// State is the schedule's state after the last Step.
func (s *Schedule) State() ScheduleState {
	return ScheduleState{Due: append([]bool(nil), s.st.Due...), Applied: append([]float64(nil), s.st.Applied...),
		HasApplied: append([]bool(nil), s.st.HasApplied...), LastPeriod: s.st.LastPeriod, Scheduled: s.st.Scheduled}
}

// Restore sets the state State gave; it must be of as many assets.
func (s *Schedule) Restore(st ScheduleState) error {
	m := len(s.names)
	if len(st.Due) != m || len(st.Applied) != m || len(st.HasApplied) != m {
		return fmt.Errorf("a schedule state of %d assets for a universe of %d", len(st.Due), m)
	}
	s.st = ScheduleState{Due: append([]bool(nil), st.Due...), Applied: append([]float64(nil), st.Applied...),
		HasApplied: append([]bool(nil), st.HasApplied...), LastPeriod: st.LastPeriod, Scheduled: st.Scheduled}
	return nil
}

// Bar is what Step reads of one calendar bar besides the weights.
type Bar struct {
	Index int   // the bar's calendar index, for messages
	Time  int64 // its unix time (the calendar's), for the schedule's period
	// First: the first bar that may trade after a warm-up (a run from
	// Options.TradeFrom), which opens with a rebalance.
	First bool
	// Has reports whether asset a has a bar here (the calendar rule).
	Has func(a int) bool
	// Held is asset a's current weight (its position at its mark over
	// equity), read only by a drift schedule.
	Held func(a int) float64
}

// Step takes bar b's decided weights col (NaN: no decision for that
// asset): it scales them down when |w| sums past 1, decides whether the
// schedule rebalances here, and marks which assets take their weight now
// (Take). It reports whether a rebalance was triggered.
func (s *Schedule) Step(b Bar, col []float64) (bool, error) {
	w := s.w
	sum := 0.0
	for a := range w {
		w[a] = col[a]
		s.take[a] = false
		if math.IsInf(w[a], 0) {
			return false, &backtest.Error{Kind: backtest.KindStrategy, Msg: fmt.Sprintf("the weight of %s at bar %d (%s) is %v; a weight is a finite fraction of equity, or NaN for none", s.names[a], b.Index, timeString(b.Time), w[a])}
		}
		if !math.IsNaN(w[a]) {
			sum += math.Abs(w[a])
		}
	}
	if sum > 1+1e-12 {
		for a := range w {
			w[a] /= sum
		}
		s.Clamped++
		if s.ClampedAt < 0 {
			s.ClampedAt = b.Index
		}
	}
	trigger := b.First
	switch s.reb.Period {
	case scriptapi.RebalanceBar:
		trigger = true
	case "drift":
		for a := range w {
			if math.IsNaN(w[a]) || !b.Has(a) {
				continue
			}
			if !s.st.HasApplied[a] || w[a] != s.st.Applied[a] || math.Abs(b.Held(a)-w[a]) > s.reb.Drift {
				trigger = true
			}
		}
	default:
		if p := periodOf(s.reb.Period, b.Time); trigger || !s.st.Scheduled || p != s.st.LastPeriod {
			trigger, s.st.LastPeriod, s.st.Scheduled = true, p, true
		}
	}
	if trigger {
		for a := range s.st.Due {
			s.st.Due[a] = true
		}
	}
	for a := range s.st.Due {
		if !s.st.Due[a] || !b.Has(a) || math.IsNaN(w[a]) {
			continue // the target waits for the asset's next bar, or its next weight
		}
		s.st.Due[a], s.st.Applied[a], s.st.HasApplied[a] = false, w[a], true
		s.take[a] = true
	}
	return trigger, nil
}

// Take reports whether asset a takes a new target weight at the bar last
// stepped, and the weight (scaled as Step scaled it).
func (s *Schedule) Take(a int) (float64, bool) { return s.w[a], s.take[a] }
