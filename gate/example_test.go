package gate_test

import (
	"errors"
	"fmt"

	"wicket/gate"
)

// A write tool's two calls: the first previews and mints a token, the second
// confirms with confirm: true and that token, and runs the stored command.
func Example() {
	previews := gate.New[gate.Fields](gate.Options{})

	// Call 1: submit_order without confirm. The tool resolves the command
	// (minting a client order id) and previews it.
	args := map[string]any{"symbol": "BTC-USD", "side": "buy", "quantity": "0.50"}
	if _, confirmed := gate.Confirmation(args); !confirmed {
		previewed := gate.Fields{
			gate.Text("symbol", "BTC-USD"),
			gate.Text("side", "buy"),
			gate.Decimal("quantity", "0.50"),
			gate.ClientID("client_order_id", "wk-1"),
		}
		tok, _, err := previews.Issue("submit_order", previewed)
		if err != nil {
			fmt.Println(err)
			return
		}
		args["confirm"] = true
		args["preview_token"] = string(tok)
	}

	// Call 2: the same arguments with confirm: true and the token. The
	// confirming command carries no client order id; the stored one runs.
	tok, confirmed := gate.Confirmation(args)
	fmt.Println("confirmed:", confirmed)
	confirming := gate.Fields{
		gate.Text("symbol", "BTC-USD"),
		gate.Text("side", "buy"),
		gate.Decimal("quantity", "0.5"),
	}
	t, err := gate.ParseToken(tok)
	if err != nil {
		fmt.Println(err)
		return
	}
	cmd, err := previews.Take("submit_order", t, confirming)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("run:", cmd)

	// A second confirm with the same token is refused: a token fires once.
	_, err = previews.Take("submit_order", t, confirming)
	fmt.Println("again:", errors.Is(err, gate.ErrUsedToken))
	// Output:
	// confirmed: true
	// run: symbol=BTC-USD side=buy quantity=0.50 client_order_id=wk-1
	// again: true
}
