package binancefutures

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"wicket/internal/project"
	"wicket/node/venuecall"

	"github.com/adshao/go-binance/v2/common"
	"github.com/adshao/go-binance/v2/futures"
)

// prepare puts the account in one-way mode and each symbol's margin type
// and leverage as wicket.toml says, then checks them; once per adapter.
// Messages name a symbol as the venue's list writes it.
func (a *Adapter) prepare(ctx context.Context, symbols []string) error {
	a.mu.Lock()
	done := a.prepared
	a.mu.Unlock()
	if done {
		return nil
	}
	mode, err := venuecall.Read(ctx, a.tr, func() (*futures.PositionMode, error) { return a.c.NewGetPositionModeService().Do(ctx) })
	if err != nil {
		return a.classify(err)
	}
	if mode.DualSidePosition {
		if err := a.c.NewChangePositionModeService().DualSide(false).Do(ctx); err != nil && apiCode(err) != codeNoModeChange {
			return fmt.Errorf("%s: the account is in hedge mode and could not be put in one-way mode (close its positions and orders first): %w", a.name, a.classify(err))
		}
	}
	if err := a.readBrackets(ctx, symbols); err != nil {
		return err
	}
	risks, err := a.positionRisk(ctx)
	if err != nil {
		return err
	}
	for _, s := range symbols {
		vs := a.syms.Venue(s)
		want := a.venue.Contract(s)
		cur, ok := risks[vs]
		if !ok {
			return a.classify(&common.APIError{Code: codeInvalidSymbol, Message: "no position risk for " + vs})
		}
		open := !dec(cur.PositionAmt).IsZero()
		if marginOf(cur.MarginType) != want.MarginType {
			if open {
				return fmt.Errorf("%s: %s is %s-margined at binance with a position of %s open, and wicket.toml says %s: the margin type is never changed under an open position; close it or write margin_type = %q for %s",
					a.name, s, marginOf(cur.MarginType), cur.PositionAmt, want.MarginType, marginOf(cur.MarginType), s)
			}
			mt := futures.MarginTypeIsolated
			if want.MarginType == project.MarginCross {
				mt = futures.MarginTypeCrossed
			}
			if err := a.c.NewChangeMarginTypeService().Symbol(vs).MarginType(mt).Do(ctx); err != nil && apiCode(err) != codeNoMarginChange {
				return fmt.Errorf("%s: setting %s's margin type to %s: %w", a.name, s, want.MarginType, a.classify(err))
			}
		}
		if lev, _ := strconv.Atoi(cur.Leverage); lev != want.Leverage {
			if open {
				return fmt.Errorf("%s: %s is at leverage %d at binance with a position of %s open, and wicket.toml says %d: leverage is never changed under an open position; close it or write leverage = %d for %s",
					a.name, s, lev, cur.PositionAmt, want.Leverage, lev, s)
			}
			if _, err := a.c.NewChangeLeverageService().Symbol(vs).Leverage(want.Leverage).Do(ctx); err != nil {
				return fmt.Errorf("%s: setting %s's leverage to %d: %w", a.name, s, want.Leverage, a.classify(err))
			}
		}
	}
	if risks, err = a.positionRisk(ctx); err != nil {
		return err
	}
	for _, s := range symbols {
		want, cur := a.venue.Contract(s), risks[a.syms.Venue(s)]
		if lev, _ := strconv.Atoi(cur.Leverage); lev != want.Leverage || marginOf(cur.MarginType) != want.MarginType {
			return fmt.Errorf("%s: %s reads back at leverage %s, %s margin; wicket.toml says %d, %s", a.name, s, cur.Leverage, marginOf(cur.MarginType), want.Leverage, want.MarginType)
		}
	}
	a.mu.Lock()
	a.prepared = true
	a.mu.Unlock()
	return nil
}

// SetLeverage changes symbol's leverage at the venue, refused while the
// symbol has a position open (the venue would re-margin it under the
// node's feet); the check reads the position first.
func (a *Adapter) SetLeverage(ctx context.Context, symbol string, leverage int) error {
	risks, err := a.positionRisk(ctx)
	if err != nil {
		return err
	}
	vs := a.syms.Venue(symbol)
	if q := dec(risks[vs].PositionAmt); !q.IsZero() {
		return a.refused(fmt.Sprintf("leverage of %s is not changed while a position of %s is open; close it first", symbol, q))
	}
	if _, err := a.c.NewChangeLeverageService().Symbol(vs).Leverage(leverage).Do(ctx); err != nil {
		return a.classify(err)
	}
	return nil
}

func marginOf(s string) string {
	if strings.EqualFold(s, "cross") || strings.EqualFold(s, "crossed") {
		return project.MarginCross
	}
	return project.MarginIsolated
}

// positionRisk reads the positions' risk, by Binance's symbol.
func (a *Adapter) positionRisk(ctx context.Context) (map[string]*futures.PositionRisk, error) {
	list, err := venuecall.Read(ctx, a.tr, func() ([]*futures.PositionRisk, error) { return a.c.NewGetPositionRiskService().Do(ctx) })
	if err != nil {
		return nil, a.classify(err)
	}
	out := map[string]*futures.PositionRisk{}
	for _, p := range list {
		if p.PositionSide == "" || p.PositionSide == "BOTH" {
			out[p.Symbol] = p
		}
	}
	return out, nil
}
