package trade

import (
	"bytes"
	"strings"
	"testing"

	"wicket/internal/testkit"
	"wicket/node"
)

// TestTradeSnapshotShowsFeesInOtherAssets: a fill whose fee was paid in
// BNB shows the BNB and its worth, and the venue's fees in other assets
// get their own section.
func TestTradeSnapshotShowsFeesInOtherAssets(t *testing.T) {
	s := testSnapshot()
	v := &s.Venues[0]
	v.AssetFees = []node.AssetFee{{Asset: "BNB", Paid: testkit.D("0.001"), Value: testkit.D("0.6")}}
	s.Events = append(s.Events, node.Event{Seq: 99, Kind: node.EventFilled, Venue: v.Name, OrderID: "ord-00000042", Symbol: "BTC-USD",
		Quantity: testkit.D("0.01"), Price: testkit.D("60000"), FeeAsset: "BNB", AssetFee: testkit.D("0.001"), FeeValue: testkit.D("0.6")})
	var b bytes.Buffer
	if err := printTradeSnapshot(&b, s); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"fees paid in other assets", "BNB    0.001  0.6 " + v.Currency, "fee 0.001 BNB (worth 0.6)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the snapshot lacks %q:\n%s", want, out)
		}
	}
}
