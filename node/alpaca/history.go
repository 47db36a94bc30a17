package alpaca

import (
	"context"
	"strings"
	"time"

	alp "github.com/alpacahq/alpaca-trade-api-go/v3/alpaca"

	"wicket/node"
	"wicket/node/command"
	"wicket/node/venuecall"
)

// activityPage is the most activities one GET /v2/account/activities
// returns (its page_size bound).
const activityPage = 100

// History reads the account's activities in [from, to) (GET
// /v2/account/activities, activity_types FILL, FEE and CFEE, oldest
// first, paged by page_token): each FILL is a trade; FEE and CFEE are
// fees charged apart from trades. Alpaca charges no fee on a fill itself
// and keeps no funding.
func (a *Adapter) History(ctx context.Context, from, to time.Time) (node.VenueHistory, error) {
	var out node.VenueHistory
	token := ""
	for {
		req := alp.GetAccountActivitiesRequest{ActivityTypes: []string{"FILL", "FEE", "CFEE"}, After: from.Add(-time.Nanosecond),
			Until: to.Add(-time.Nanosecond), Direction: "asc", PageSize: activityPage, PageToken: token}
		page, err := venuecall.Read(ctx, a.tr, func() ([]alp.AccountActivity, error) { return a.c.GetAccountActivities(req) })
		if err != nil {
			return node.VenueHistory{}, a.classify(err)
		}
		for _, act := range page {
			switch act.ActivityType {
			case "FILL":
				if act.TransactionTime.Before(from) || !act.TransactionTime.Before(to) {
					continue
				}
				side := command.Buy
				if strings.HasPrefix(act.Side, "sell") {
					side = command.Sell
				}
				out.Trades = append(out.Trades, node.VenueTrade{ID: act.ID, VenueOrderID: act.OrderID, Symbol: a.nodeSymbol(act.Symbol),
					Side: side, Quantity: act.Qty, Price: act.Price, Time: act.TransactionTime.UTC()})
			case "FEE", "CFEE":
				out.OtherFees = out.OtherFees.Add(act.NetAmount.Abs())
			}
		}
		if len(page) < activityPage {
			return out, nil
		}
		token = page[len(page)-1].ID
	}
}
