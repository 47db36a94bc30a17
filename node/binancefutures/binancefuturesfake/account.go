package binancefuturesfake

import (
	"net/url"
	"strconv"
	"time"

	"github.com/shopspring/decimal"
)

func (f *Fake) premiumIndex() any {
	var out []any
	for _, s := range f.sorted() {
		rate := s.FundingRate
		if rate == "" {
			rate = "0.0001"
		}
		out = append(out, map[string]any{"symbol": s.Name, "markPrice": s.Price, "indexPrice": s.Price, "lastFundingRate": rate,
			"nextFundingTime": time.Now().Add(time.Hour).UnixMilli(), "interestRate": "0.0001", "time": time.Now().UnixMilli()})
	}
	return out
}

// risk is one symbol's position figures (f.mu held): notional at the
// mark, unrealised P&L, isolated margin, and the liquidation price under a
// flat 0.5 % maintenance margin rate.
func (f *Fake) risk(name string) map[string]any {
	s, p := f.symbols[name], f.positions[name]
	mark := decimal.RequireFromString(s.Price)
	upnl := mark.Sub(p.Entry).Mul(p.Amount)
	notional := p.Amount.Mul(mark)
	margin := decimal.Zero
	liq := decimal.Zero
	if !p.Amount.IsZero() {
		margin = p.Entry.Mul(p.Amount.Abs()).Div(decimal.NewFromInt(int64(p.Leverage))).Round(8)
		mmr, cum := bracketOf(notional.Abs())
		// Isolated, the margin as the wallet: long (entry − (margin + cum)/qty) / (1 − mmr),
		// short (entry + (margin + cum)/qty) / (1 + mmr).
		per := margin.Add(cum).Div(p.Amount.Abs())
		if p.Amount.IsPositive() {
			liq = p.Entry.Sub(per).Div(decimal.NewFromInt(1).Sub(mmr)).Round(2)
		} else {
			liq = p.Entry.Add(per).Div(decimal.NewFromInt(1).Add(mmr)).Round(2)
		}
	}
	mt := "cross"
	if p.MarginType == "ISOLATED" {
		mt = "isolated"
	}
	return map[string]any{"symbol": name, "positionAmt": p.Amount.String(), "entryPrice": p.Entry.String(), "breakEvenPrice": p.Entry.String(),
		"markPrice": s.Price, "unRealizedProfit": upnl.String(), "liquidationPrice": liq.String(), "leverage": strconv.Itoa(p.Leverage),
		"maxNotionalValue": "1000000", "marginType": mt, "isolatedMargin": margin.String(), "isAutoAddMargin": "false", "positionSide": "BOTH",
		"notional": notional.String(), "isolatedWallet": margin.String(), "updateTime": time.Now().UnixMilli()}
}

// brackets are every symbol's notional brackets (the shape of Binance's
// BTCUSDT table, trimmed): the maintenance margin rate and amount rise
// with the notional, the leverage allowed falls.
var brackets = []struct {
	lev                  int
	floor, cap, mmr, cum decimal.Decimal
}{
	{125, decimal.Zero, decimal.NewFromInt(50000), decimal.RequireFromString("0.004"), decimal.Zero},
	{100, decimal.NewFromInt(50000), decimal.NewFromInt(600000), decimal.RequireFromString("0.005"), decimal.NewFromInt(50)},
	{75, decimal.NewFromInt(600000), decimal.NewFromInt(3000000), decimal.RequireFromString("0.0065"), decimal.NewFromInt(950)},
	{50, decimal.NewFromInt(3000000), decimal.NewFromInt(1000000000), decimal.RequireFromString("0.01"), decimal.NewFromInt(11450)},
}

// bracketOf is the bracket of a notional.
func bracketOf(notional decimal.Decimal) (mmr, cum decimal.Decimal) {
	for _, b := range brackets {
		if notional.LessThan(b.cap) {
			return b.mmr, b.cum
		}
	}
	last := brackets[len(brackets)-1]
	return last.mmr, last.cum
}

func (f *Fake) positionRisk() any {
	var out []any
	for _, s := range f.sorted() {
		out = append(out, f.risk(s.Name))
	}
	return out
}

func (f *Fake) account() any {
	used, upnl := decimal.Zero, decimal.Zero
	for _, s := range f.sorted() {
		r := f.risk(s.Name)
		used = used.Add(decimal.RequireFromString(r["isolatedMargin"].(string)))
		upnl = upnl.Add(decimal.RequireFromString(r["unRealizedProfit"].(string)))
	}
	avail := f.wallet.Add(upnl).Sub(used)
	return map[string]any{"totalWalletBalance": f.wallet.String(), "availableBalance": avail.String(), "totalUnrealizedProfit": upnl.String(),
		"canTrade": true, "assets": []any{map[string]any{"asset": "USDT", "walletBalance": f.wallet.String(), "availableBalance": avail.String(),
			"unrealizedProfit": upnl.String(), "marginBalance": f.wallet.Add(upnl).String()}}, "positions": []any{}}
}

func (f *Fake) incomes(form url.Values) any {
	out := []any{}
	start, _ := strconv.ParseInt(form.Get("startTime"), 10, 64)
	for _, in := range f.income {
		if (form.Get("incomeType") == "" || in["incomeType"] == form.Get("incomeType")) && in["time"].(int64) >= start &&
			(form.Get("symbol") == "" || in["symbol"] == form.Get("symbol")) {
			out = append(out, in)
		}
	}
	return out
}
