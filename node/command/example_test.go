package command_test

import (
	"encoding/json"
	"fmt"

	"wicket/node/command"
)

func Example() {
	// An agent's arguments: the command's fields plus the agent's own keys.
	args := json.RawMessage(`{"venue":"paper","symbol":"BTC-USD","side":"buy","type":"limit",
		"quantity":"0.5","price":"41000","reason":"breakout"}`)
	c, extra, err := command.DecodeWith("submit_order", args, "reason", "confirm", "preview_token")
	if err != nil {
		fmt.Println(err)
		return
	}
	// The preview mints the client order id once; the confirming call omits it.
	ids := func() string { return "0190a8c4-0000-7000-8000-000000000001" }
	previewed := c.Resolve(ids)
	var reason string
	_ = json.Unmarshal(extra["reason"], &reason)
	env, _ := json.Marshal(command.NewEnvelope(previewed, reason))
	fmt.Println(string(env))
	fmt.Println(previewed.SameIntent(c) == nil)

	changed := c
	changed.Quantity = c.Quantity.Add(c.Quantity)
	fmt.Println(previewed.SameIntent(changed))
	// Output:
	// {"command":{"verb":"submit_order","venue":"paper","symbol":"BTC-USD","side":"buy","type":"limit","quantity":"0.5","price":"41000","time_in_force":"gtc","client_order_id":"wk-0190a8c4-0000-7000-8000-000000000001"},"reason":"breakout"}
	// true
	// command differs from the previewed one: quantity previewed "0.5", now "1"; confirm the previewed command unchanged, or call without confirm for a new preview
}
