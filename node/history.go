package node

import (
	"time"

	"github.com/shopspring/decimal"

	"wicket/node/command"
)

// VenueTrade is one fill as a real venue's own trade history records it
// (Binance's myTrades, Alpaca's FILL activities): what the daily
// statement holds the node's fills against.
type VenueTrade struct {
	ID           string // the venue's trade or activity id
	VenueOrderID string
	Symbol       string // the venue's symbols list's spelling
	Side         command.Side
	Quantity     decimal.Decimal
	Price        decimal.Decimal
	// Fee is the trade's fee in the account currency; when the venue
	// charged it in another asset FeeAsset names it and Fee is in it.
	Fee      decimal.Decimal
	FeeAsset string
	Time     time.Time
}

// VenueHistory is a real venue's record of one span of time.
type VenueHistory struct {
	Trades []VenueTrade
	// OtherFees are fees charged apart from any trade (Alpaca's FEE and
	// CFEE activities), in the account currency.
	OtherFees decimal.Decimal
	// Funding is funding paid (negative) or received; FundingKnown says
	// the venue keeps funding at all (a spot account does not).
	Funding      decimal.Decimal
	FundingKnown bool
}

// Statement is the daily reconciliation of the node's fills, fees and
// funding against one venue's own history (GET /v1/statement).
type Statement struct {
	Day   string `json:"day"` // YYYY-MM-DD, UTC
	Venue string `json:"venue"`
	Kind  string `json:"kind"`
	// Independent is false for a paper venue: its only record is the
	// node's own, so nothing independent was compared (Note says so).
	Independent bool            `json:"independent"`
	NodeFills   int             `json:"node_fills"`
	VenueFills  int             `json:"venue_fills"`
	NodeFees    decimal.Decimal `json:"node_fees"`
	VenueFees   decimal.Decimal `json:"venue_fees"`
	// NodeFunding and VenueFunding are the day's funding, received
	// positive (a venue that keeps none: zero); Funding says in words what
	// their comparison found.
	NodeFunding  decimal.Decimal `json:"node_funding"`
	VenueFunding decimal.Decimal `json:"venue_funding"`
	Funding      string          `json:"funding"`
	Mismatches   []Mismatch      `json:"mismatches"`
	Note         string          `json:"note,omitempty"`
}

// Mismatch is one difference between the node's record and the venue's,
// with both figures.
type Mismatch struct {
	What          string `json:"what"` // missing_at_venue, missing_in_node, quantity, price, fee, side, other_fees
	Order         string `json:"order,omitempty"`
	VenueOrderID  string `json:"venue_order_id,omitempty"`
	ClientOrderID string `json:"client_order_id,omitempty"`
	Symbol        string `json:"symbol,omitempty"`
	Node          string `json:"node"`  // the node's figure ("" when it has none)
	Venue         string `json:"venue"` // the venue's figure
	Text          string `json:"text"`
}
