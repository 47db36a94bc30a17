package node

import "github.com/shopspring/decimal"

// Fees paid in another asset (docs/node.md "Fees in another asset"): a
// venue may charge a fill's commission in an asset that is neither the
// account currency nor the instrument's (Binance's "pay fees with BNB").
// Such a fee is kept in its own asset wherever it is booked: the venue's
// report (VenueOrder.FeeAsset and AssetFee, cumulative), the fill event
// in the journal (Event.FeeAsset and AssetFee, that fill's own; FeeValue
// its worth in the account currency at the fee asset's mark when the node
// booked it) and the snapshot (Venue.AssetFees). Event.Fee stays what was
// charged in the account currency, so a reader that knows nothing of
// other assets never mistakes BNB for dollars.

// AssetFee is what a venue's fills paid in one other asset: Paid in the
// asset, Value their worth in the account currency at the fee asset's
// marks when each was booked; Note says when some were not valued (no
// listed symbol of the asset gave a mark).
type AssetFee struct {
	Asset string          `json:"asset"`
	Paid  decimal.Decimal `json:"paid"`
	Value decimal.Decimal `json:"value"`
	Note  string          `json:"note,omitempty"`
}
