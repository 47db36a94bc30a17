package binancefutures

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"wicket/internal/margin"
	"wicket/node/venuecall"

	"github.com/shopspring/decimal"
)

// bracket is one notional bracket of a symbol (USDⓈ-M "Notional and
// Leverage Brackets"): from floor to cap, the most leverage and the
// maintenance margin rate and amount (cum).
type bracket struct {
	InitialLeverage int             `json:"initialLeverage"`
	NotionalCap     decimal.Decimal `json:"notionalCap"`
	NotionalFloor   decimal.Decimal `json:"notionalFloor"`
	MaintMargin     decimal.Decimal `json:"maintMarginRatio"`
	Cum             decimal.Decimal `json:"cum"`
}

// readBrackets reads each symbol's notional brackets (GET
// /fapi/v1/leverageBracket, read here for its figures as decimals).
func (a *Adapter) readBrackets(ctx context.Context, symbols []string) error {
	for _, s := range symbols {
		vs := a.syms.Venue(s)
		list, err := venuecall.Read(ctx, a.tr, func() ([]struct {
			Symbol   string    `json:"symbol"`
			Brackets []bracket `json:"brackets"`
		}, error) {
			p := url.Values{}
			p.Set("symbol", vs)
			var out []struct {
				Symbol   string    `json:"symbol"`
				Brackets []bracket `json:"brackets"`
			}
			return out, a.signed(ctx, http.MethodGet, "/fapi/v1/leverageBracket", p, &out)
		})
		if err != nil {
			return a.classify(err)
		}
		for _, l := range list {
			if l.Symbol == vs && len(l.Brackets) > 0 {
				if max := l.Brackets[0].InitialLeverage; max > 0 && a.venue.Contract(s).Leverage > max {
					return fmt.Errorf("%s: wicket.toml's leverage %d for %s is above the %dx binance allows it; lower it", a.name, a.venue.Contract(s).Leverage, s, max)
				}
				a.mu.Lock()
				a.brackets[vs] = l.Brackets
				a.mu.Unlock()
			}
		}
	}
	return nil
}

// MaintenanceBrackets is symbol's (either spelling) maintenance margin
// table as the venue states it (its notional brackets, read at start,
// sorted by floor); none before the venue told it.
func (a *Adapter) MaintenanceBrackets(symbol string) []margin.Bracket[decimal.Decimal] {
	vs := a.syms.Venue(symbol)
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]margin.Bracket[decimal.Decimal], 0, len(a.brackets[vs]))
	for _, b := range a.brackets[vs] {
		out = append(out, margin.Bracket[decimal.Decimal]{Floor: b.NotionalFloor, Rate: b.MaintMargin, Amount: b.Cum})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Floor.LessThan(out[j].Floor) })
	return out
}
