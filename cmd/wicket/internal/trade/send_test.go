package trade

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"wicket/node"
	"wicket/node/command"
)

// TestTradeTicketOutcome: a ticket read is told in node.SendResult's shape,
// its pending advice in the one wording every surface uses.
func TestTradeTicketOutcome(t *testing.T) {
	o := tradeTicketOutcome("tk-5", node.Outcome{Status: node.Pending, Verb: command.SubmitOrder, ClientOrderID: "wk-5"})
	var b bytes.Buffer
	printTradeOutcome(&b, o)
	if want := "pending (ticket tk-5, client_order_id wk-5): the node has not finished ticket tk-5 yet; " + node.PendingAdvice + "\n"; b.String() != want {
		t.Errorf("printed %q, want %q", b.String(), want)
	}
	data, err := json.Marshal(o)
	if err != nil || !strings.Contains(string(data), `"status":"pending"`) || !strings.Contains(string(data), `"advice":"the node has not finished`) {
		t.Errorf("--json = %s %v", data, err)
	}
	o = tradeTicketOutcome("tk-6", node.Outcome{Status: node.Rejected, Verb: command.CancelOrder, Code: "unknown_order", Reason: "no order\u202e x"})
	b.Reset()
	printTradeOutcome(&b, o)
	if want := "rejected (ticket tk-6): no order x [unknown_order]\n"; b.String() != want {
		t.Errorf("printed %q, want %q", b.String(), want)
	}
}
