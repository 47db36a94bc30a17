package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"wicket/trace"
)

func traceFollow(ctx context.Context, o *traceOptions, _ []string) error {
	r := o.reader()
	if o.filter.Since.IsZero() {
		fmt.Fprintf(o.stderr, "following %s from now (interrupt to stop; --since shows history first)\n", o.dir)
	} else {
		fmt.Fprintf(o.stderr, "following %s since %s (interrupt to stop)\n", o.dir, traceStamp(o.filter.Since))
	}
	var print func(trace.Entry) error
	if o.json {
		print = func(e trace.Entry) error { return writeJSONLines(o.stdout, []trace.Entry{e}) }
	} else {
		const row = "%-24s  %-13s  %5s  %-17s  %-7s  %8s  %s\n"
		if _, err := fmt.Fprintf(o.stdout, row, "TIME", "SESSION", "SEQ", "TOOL", "VERDICT", "MS", "DETAIL"); err != nil {
			return err
		}
		var short traceIDs // the full set is not known ahead: ids cut to traceIDFloor characters
		print = func(e trace.Entry) error {
			_, err := fmt.Fprintf(o.stdout, row, traceStamp(e.TS), short.session(e.Session), strconv.FormatInt(e.Seq, 10),
				traceDash(e.Tool), e.Verdict, traceMS(e.MS), traceDetail(e, short))
			return err
		}
	}
	err := r.Follow(ctx, o.filter, print)
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil // interrupted: the normal end of follow
	}
	return err
}
