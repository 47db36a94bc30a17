package trace_test

import (
	"encoding/json"
	"fmt"
	"log"
	"os"
	"time"

	"wicket/trace"
)

func Example() {
	dir, err := os.MkdirTemp("", "trace")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// The agent server opens a Writer at start-up...
	now := func() time.Time { return time.Date(2026, 5, 14, 9, 30, 0, 0, time.UTC) }
	w, err := trace.Open(dir, trace.Options{Now: now, Stderr: os.Stderr})
	if err != nil {
		log.Fatal(err)
	}
	// ...and writes one entry per tools/call.
	w.Write(trace.Entry{Session: "s1", Seq: 1, Tool: "submit_order", Write: true, Profile: "full",
		Args:    json.RawMessage(`{"venue":"paper","symbol":"BTC-USD","side":"buy","quantity":"0.1"}`),
		Verdict: trace.Preview, Token: "t1", ClientOrderID: "wk-1", MS: 2.5})
	w.Write(trace.Entry{Session: "s1", Seq: 2, Tool: "submit_order", Write: true, Profile: "full",
		Verdict: trace.OK, Token: "t1", ClientOrderID: "wk-1", Ticket: "tk-9", Outcome: "accepted", MS: 40})
	w.Close()

	// The operator reads it back.
	r := &trace.Reader{Dir: dir}
	entries, err := r.Read(trace.Filter{Token: "t1"})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range trace.Chains(entries) {
		fmt.Println(c.Token, c.State, c.Outcome)
		for _, e := range c.Entries {
			fmt.Println(" ", trace.Step(e), e.Seq, e.Verdict)
		}
	}
	// Output:
	// t1 confirmed accepted
	//   preview 1 preview
	//   confirm 2 ok
}
