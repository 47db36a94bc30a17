package main

import (
	"context"
	"fmt"
	"strings"

	"wicket/trace"
)

func traceStats(_ context.Context, o *traceOptions, _ []string) error {
	entries, err := o.read(o.filter)
	if err != nil {
		return err
	}
	s := trace.Summarize(entries)
	if o.json {
		return writeJSON(o.stdout, s)
	}
	if len(entries) == 0 {
		o.noEntries()
		return nil
	}
	w := o.stdout
	fmt.Fprintf(w, "%d entries from %s to %s\n\n", s.Total, traceStamp(s.First), traceStamp(s.Last))

	tw := traceTable(w)
	fmt.Fprintln(tw, "TOOL\tOK\tPREVIEW\t(CHECKS FAILED)\tREFUSED\tERROR\tTOTAL")
	for _, t := range s.Tools {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\n", traceDash(t.Tool), t.OK, t.Preview, t.PreviewFailed, t.Refused, t.Error, t.Total)
	}
	fmt.Fprintf(tw, "(all)\t%d\t%d\t%d\t%d\t%d\t%d\n", s.OK, s.Preview, s.PreviewFailed, s.Refused, s.Error, s.Total)
	if err := tw.Flush(); err != nil {
		return err
	}

	if len(s.Refusals) > 0 {
		const top = 10
		fmt.Fprintln(w)
		tw = traceTable(w)
		fmt.Fprintln(tw, "REFUSED\tREASON\tTOOLS")
		for i, r := range s.Refusals {
			if i == top {
				break
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\n", r.Count, r.Reason, strings.Join(r.Tools, ", "))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if n := len(s.Refusals) - top; n > 0 {
			fmt.Fprintf(w, "... and %d more reasons (--json lists all)\n", n)
		}
	}

	fmt.Fprintln(w)
	tw = traceTable(w)
	callers := false
	for _, ss := range s.Sessions {
		callers = callers || ss.Caller != ""
	}
	if callers { // an HTTP server's sessions: say whose each one was
		fmt.Fprintln(tw, "SESSION\tCALLER\tPROFILE\tFIRST\tLAST\tCALLS\tOK\tPREVIEW\tREFUSED\tERROR")
	} else {
		fmt.Fprintln(tw, "SESSION\tPROFILE\tFIRST\tLAST\tCALLS\tOK\tPREVIEW\tREFUSED\tERROR")
	}
	for _, ss := range s.Sessions {
		who := ""
		if callers {
			who = traceDash(ss.Caller) + "\t"
		}
		fmt.Fprintf(tw, "%s\t%s%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\n", traceDash(ss.Session), who, traceDash(ss.Profile), traceStamp(ss.First), traceStamp(ss.Last),
			ss.Total, ss.OK, ss.Preview, ss.Refused, ss.Error)
	}
	return tw.Flush()
}
