package server

import (
	"fmt"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"wicket/node"
)

// Fees paid in another asset (node/feeasset.go): a real venue's fill whose
// commission the venue charged in another asset than the account currency
// (Binance's BNB) is journaled with that asset and amount, and its worth
// in the account currency at the asset's mark: the mark of a symbol the
// venue lists whose base is the asset and whose quote is the account's
// (BNB-USD at a Binance venue, BNBUSDT there). The fee comes off the
// asset's holding (a listed symbol's position), never off the cash; the
// snapshot shows each asset's fees (Venue.AssetFees).

// otherFees is a real venue's fees in other assets, from its fill events.
type otherFees struct {
	byOrder  map[string]decimal.Decimal // node order id → cumulative, in its asset
	byAsset  map[string]*node.AssetFee
	unvalued map[string]int // fills of the asset booked without a mark
}

// feeSymbol is the symbol r lists whose base is asset (its quote the
// account's: every listed symbol's at a spot venue), or false.
func feeSymbol(r *remote, asset string) (string, bool) {
	m := r.cfg.Instruments()
	for _, s := range r.cfg.Symbols {
		if c, err := m.Canonical(s); err == nil && strings.HasPrefix(c, asset+"-") {
			return s, true
		}
	}
	return "", false
}

// assetFee sets on ev (a fill of node order id at r) the part of the
// venue's cumulative fee in another asset vo reports that the node has not
// booked, valued at the asset's mark.
func (r *remote) assetFee(ev *node.Event, id string, vo node.VenueOrder) {
	if vo.FeeAsset == "" {
		return
	}
	d := vo.AssetFee.Sub(r.other.byOrder[id])
	if !d.IsPositive() {
		return
	}
	ev.FeeAsset, ev.AssetFee = vo.FeeAsset, d
	if sym, ok := feeSymbol(r, vo.FeeAsset); ok {
		if px, ok := r.Mark(sym); ok && px.IsPositive() {
			ev.FeeValue = d.Mul(px).Round(8)
		}
	}
}

// applyAssetFee books a fill's fee in another asset (live and on replay).
func (r *remote) applyAssetFee(ev node.Event) {
	if ev.FeeAsset == "" || !ev.AssetFee.IsPositive() {
		return
	}
	o := &r.other
	if o.byOrder == nil {
		o.byOrder, o.byAsset, o.unvalued = map[string]decimal.Decimal{}, map[string]*node.AssetFee{}, map[string]int{}
	}
	o.byOrder[ev.OrderID] = o.byOrder[ev.OrderID].Add(ev.AssetFee)
	a := o.byAsset[ev.FeeAsset]
	if a == nil {
		a = &node.AssetFee{Asset: ev.FeeAsset}
		o.byAsset[ev.FeeAsset] = a
	}
	a.Paid, a.Value = a.Paid.Add(ev.AssetFee), a.Value.Add(ev.FeeValue)
	if ev.FeeValue.IsZero() {
		o.unvalued[ev.FeeAsset]++
	}
	if sym, ok := feeSymbol(r, ev.FeeAsset); ok { // the asset's holding pays it, until the account is read again
		for i := range r.account.Positions {
			if r.account.Positions[i].Symbol == sym {
				r.account.Positions[i].Quantity = r.account.Positions[i].Quantity.Sub(ev.AssetFee)
			}
		}
	}
}

// assetFees is the snapshot's list, by asset.
func (r *remote) assetFees() []node.AssetFee {
	var out []node.AssetFee
	for _, a := range r.other.byAsset {
		f := *a
		if n := r.other.unvalued[f.Asset]; n > 0 {
			cur := r.account.Currency
			if cur == "" {
				cur = r.cfg.Currency
			}
			f.Note = fmt.Sprintf("%d fill(s) not valued: no mark for %s in %s when booked; list a %s symbol at the venue (%s-USD) so the node reads its mark",
				n, f.Asset, cur, f.Asset, f.Asset)
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b node.AssetFee) int { return strings.Compare(a.Asset, b.Asset) })
	return out
}
