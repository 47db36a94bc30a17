package research

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"wicket/internal/intrabar"
	"wicket/strategy/backtest"
)

// LedgerCosts are the costs a trial ran under, as its research ledger row
// records them (the row's costs object): every row kind (backtest, sweep
// combination, walk-forward, optimisation trial) writes this shape. It is
// declared once, here: the JSON is its fields' json tags, and the compact
// form listings show (String) and the comparison a resumed optimisation
// makes (Diff) walk the same fields by their ledger tags (the short name;
// ",v1" marks the fields rows carried before the shape had the rest).
//
// A nil rate is a cost that was off. Funding is what the run asked for:
// auto (charged when the store holds the symbol's rates), on or off; a
// backtest records whether it charged it (on or off).
type LedgerCosts struct {
	Capital           string   `json:"capital" ledger:"capital,v1"`
	FeeBps            float64  `json:"fee_bps" ledger:"fee,v1"`
	SlippageBps       float64  `json:"slippage_bps" ledger:"slip,v1"`
	Fill              string   `json:"fill,omitempty" ledger:"fill,v1"`
	Intrabar          string   `json:"intrabar,omitempty" ledger:"intrabar"`
	Funding           string   `json:"funding,omitempty" ledger:"funding"`
	BorrowRate        *float64 `json:"borrow_rate,omitempty" ledger:"borrow"`
	Leverage          *float64 `json:"leverage,omitempty" ledger:"leverage"`
	MaintenanceMargin *float64 `json:"maintenance_margin,omitempty" ledger:"mm"`
	MaxVolumePct      *float64 `json:"max_volume_pct,omitempty" ledger:"vol%"`
	VolumeCap         string   `json:"volume_cap,omitempty" ledger:"vol_cap"`
}

// costField is one field of LedgerCosts as its tags describe it.
type costField struct {
	index int
	json  string // the JSON name
	short string // the name in the compact form
	v1    bool   // old rows carry it too
}

var costFields = func() []costField {
	t := reflect.TypeFor[LedgerCosts]()
	out := make([]costField, t.NumField())
	for i := range out {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		short, opt, _ := strings.Cut(f.Tag.Get("ledger"), ",")
		out[i] = costField{index: i, json: name, short: short, v1: opt == "v1"}
	}
	return out
}()

// ReadLedgerCosts reads a row's costs object; what it cannot read is
// unknown (Known false, String "unknown").
func ReadLedgerCosts(raw json.RawMessage) LedgerCosts {
	var c LedgerCosts
	_ = json.Unmarshal(raw, &c)
	return c
}

// Known reports whether the row recorded the whole shape: rows written
// before it did carry capital, fee, slippage and fill alone, and every
// other cost of theirs is unknown. A recorded row always names its
// intrabar rule.
func (c LedgerCosts) Known() bool { return c.Intrabar != "" }

// text is field f's value as the compact form and Diff show it; "" when
// it is off or absent.
func (c LedgerCosts) text(f costField) string {
	v := reflect.ValueOf(c).Field(f.index)
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return ""
		}
		return fmtNum(v.Elem().Float())
	case reflect.Float64:
		return fmtNum(v.Float())
	}
	return v.String()
}

// String is the compact form, "fee=10 slip=5 intrabar=path funding=auto
// leverage=3 mm=0.005", costs that were off left out; an old row's known
// fields are followed by "rest=unknown", and a row with none is
// "unknown".
func (c LedgerCosts) String() string {
	var parts []string
	for _, f := range costFields {
		if f.short == "capital" || (!c.Known() && !f.v1) {
			continue // the capital is not a cost; listings show it elsewhere
		}
		if s := c.text(f); s != "" {
			parts = append(parts, f.short+"="+s)
		}
	}
	switch {
	case c.Known():
	case c.Capital == "": // every row that recorded costs named its capital
		return "unknown"
	default:
		parts = append(parts, "rest=unknown")
	}
	return strings.Join(parts, " ")
}

// Diff names what differs between was (a recorded run's costs) and c:
// "fee_bps 10 then, 5 now", one entry per field. When was is an old row's,
// only the fields it carried are compared.
func (c LedgerCosts) Diff(was LedgerCosts) []string {
	var out []string
	for _, f := range costFields {
		if !was.Known() && !f.v1 {
			continue
		}
		a, b := was.text(f), c.text(f)
		if a == b {
			continue
		}
		out = append(out, fmt.Sprintf("%s %s then, %s now", f.json, orOff(a), orOff(b)))
	}
	return out
}

func orOff(s string) string {
	if s == "" {
		return "off"
	}
	return s
}

// ledgerCostsOf is the costs a plan's trials run under: its settings, its
// intrabar rule and its cost options as the backtest resolves them (a
// leverage's default maintenance margin, a volume cap's default mode).
func ledgerCostsOf(s Settings, rule string, o backtest.CostOptions) LedgerCosts {
	c := LedgerCosts{Capital: s.Capital, FeeBps: s.FeeBps, SlippageBps: s.SlippageBps, Intrabar: intrabarText(rule), Funding: o.FundingWanted(),
		BorrowRate: o.BorrowRate}
	if rc, err := o.Costs(); err == nil { // checked before any trial ran
		if rc.Leverage > 0 {
			c.Leverage, c.MaintenanceMargin = &rc.Leverage, &rc.MaintenanceMargin
		}
		if rc.MaxVolumePct > 0 {
			c.MaxVolumePct, c.VolumeCap = &rc.MaxVolumePct, rc.VolumeCap.String()
		}
	} else {
		c.Leverage, c.MaintenanceMargin, c.MaxVolumePct, c.VolumeCap = o.Leverage, o.MaintenanceMargin, o.MaxVolumePct, o.VolumeCap
	}
	return c
}

// backtestCosts is the costs a backtest ran under, from its report's
// settings: the fee, slippage, fill and intrabar rule it echoes, and the
// costs beyond them it charged (funding on when it charged it).
func backtestCosts(settings json.RawMessage) LedgerCosts {
	var s struct {
		Capital     string  `json:"capital"`
		FeeBps      float64 `json:"fee_bps"`
		SlippageBps float64 `json:"slippage_bps"`
		Fill        string  `json:"fill"`
		Intrabar    string  `json:"intrabar"`
		Costs       struct {
			LedgerCosts
			Funding bool `json:"funding"`
		} `json:"costs"`
	}
	_ = json.Unmarshal(settings, &s) // BacktestRow read them already
	c := s.Costs.LedgerCosts
	c.Capital, c.FeeBps, c.SlippageBps, c.Fill, c.Intrabar, c.Funding = s.Capital, s.FeeBps, s.SlippageBps, s.Fill, intrabarText(s.Intrabar), "off"
	if s.Costs.Funding {
		c.Funding = "on"
	}
	return c
}

// intrabarText is a rule's name, "path" for the default.
func intrabarText(rule string) string {
	r, err := intrabar.ParseRule(rule)
	if err != nil {
		return rule
	}
	return r.String()
}

// JSON is c as a row's costs object.
func (c LedgerCosts) JSON() json.RawMessage { return mustJSON(c) }
