package main

import (
	"fmt"
	"io"
	"time"

	"wicket/deploy"
)

// printAttribution prints the report's live-against-replay attribution:
// the two P&Ls, the gap and its parts in total and per UTC day, and the
// funding the deployment's book took (nil: nothing replayed).
func printAttribution(w io.Writer, a *deploy.Attribution, funding []deploy.FundingPayment) {
	for _, f := range funding {
		fmt.Fprintf(w, "funding      %s on %s at %s (the venue's %s)\n", f.Amount, f.Symbol, f.Time.Format(time.RFC3339), f.Venue)
	}
	if a == nil {
		return
	}
	for _, n := range a.Notes {
		fmt.Fprintf(w, "gap note     %s\n", n)
	}
	if a.From.IsZero() {
		return
	}
	fmt.Fprintf(w, "live/replay  from %s to %s: live P&L %s, replay P&L %s (capital %s)\n", a.From.Format(time.RFC3339), a.To.Format(time.RFC3339),
		a.Live.StringFixed(2), a.Replay.StringFixed(2), a.Capital)
	if !a.ReplayFunding.IsZero() {
		fmt.Fprintf(w, "replay fund  %s on the replay's position (the notes say at which rates)\n", a.ReplayFunding.StringFixed(2))
	}
	fmt.Fprintf(w, "gap total    %s\n", a.Total.Summary())
	for _, g := range a.Assets {
		fmt.Fprintf(w, "gap %s %s\n", g.Series, g.Total.Summary())
	}
	for _, d := range a.Days {
		fmt.Fprintf(w, "gap %s %s\n", d.Day, d.Summary())
	}
}
