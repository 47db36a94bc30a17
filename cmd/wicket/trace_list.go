package main

import (
	"context"
	"fmt"
)

func traceList(_ context.Context, o *traceOptions, _ []string) error {
	entries, err := o.read(o.filter)
	if err != nil {
		return err
	}
	if o.limit > 0 && len(entries) > o.limit {
		fmt.Fprintf(o.stderr, "showing the newest %d of %d matching entries\n", o.limit, len(entries))
		entries = entries[len(entries)-o.limit:]
	}
	if o.json {
		return writeJSONLines(o.stdout, entries)
	}
	if len(entries) == 0 {
		o.noEntries()
		return nil
	}
	short := traceShortener(entries)
	tw := traceTable(o.stdout)
	callers := false
	for _, e := range entries {
		callers = callers || e.Caller != ""
	}
	if callers { // entries of an HTTP server: say whose session each was
		fmt.Fprintln(tw, "TIME\tSESSION\tCALLER\tSEQ\tTOOL\tVERDICT\tMS\tDETAIL")
	} else {
		fmt.Fprintln(tw, "TIME\tSESSION\tSEQ\tTOOL\tVERDICT\tMS\tDETAIL")
	}
	for _, e := range entries {
		who := ""
		if callers {
			who = traceDash(e.Caller) + "\t"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s%d\t%s\t%s\t%s\t%s\n", traceStamp(e.TS), short.session(e.Session), who, e.Seq, traceDash(e.Tool),
			e.Verdict, traceMS(e.MS), traceDetail(e, short))
	}
	return tw.Flush()
}
