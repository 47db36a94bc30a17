package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"wicket/strategy/ledger"
	"wicket/strategy/worker"
)

// optimizeRow is the ledger row of one trial of an optimisation: a sweep
// combination's row, with the optimiser's mark in its audit data.
func optimizeRow(ctx context.Context, p *plan, t *worker.Trial, mark *optimizeMark) ledger.Row {
	row := sweepRows(ctx, p, []*worker.Trial{t}, nil)[0]
	row.Audit = mustJSON(optimizeAudit{trialAudit: trialAudit{Stats: t.Stats, Blocks: []worker.BlockStat(t.Blocks)}, Optimize: mark})
	return row
}

// recordBatch appends a batch's rows under the run's id (minting it on
// the first batch) and returns the last row's seq (0 when not recorded).
func (l *Local) recordBatch(ctx context.Context, rows []ledger.Row, res *OptimizeResult) int64 {
	if l.cfg.Recorder == nil || len(rows) == 0 {
		return 0
	}
	for i := range rows {
		rows[i].RunID = res.RunID
	}
	id, err := l.cfg.Recorder.Append(context.WithoutCancel(ctx), rows)
	if res.RunID == "" {
		res.RunID = id
	}
	if err != nil {
		w := ledgerWarning(err)
		if !slices.Contains(res.Warnings, w) {
			res.Warnings = append(res.Warnings, w)
		}
		if id == "" {
			return 0
		}
	}
	return rows[len(rows)-1].Seq
}

// resumable adds to a failed batch's error that the run can be resumed.
func resumable(err error, runID string, n int) error {
	var e *Error
	if errors.As(err, &e) {
		return &Error{Kind: e.Kind, Msg: fmt.Sprintf("%s; the run's %d trials so far are in the research ledger as run %s: resume it with resume %s", e.Msg, n, runID, runID), Err: e}
	}
	return fmt.Errorf("%w; the run's %d trials so far are in the research ledger as run %s: resume it", err, n, runID)
}

// resumeRows reads the run to resume, checks it is an optimisation of
// this strategy, series and grid under the same costs and intrabar rule,
// and returns its trials in ledger order with its method and seed.
func (l *Local) resumeRows(ctx context.Context, req OptimizeRequest, p *plan, ss *searchSpace, method string) ([]ledger.Row, string, uint64, error) {
	rr, ok := l.cfg.Recorder.(runReader)
	if !ok {
		return nil, "", 0, errorf(KindUnavailable, "resume needs the research ledger, and it is not open here")
	}
	rows, _, err := rr.Query(context.WithoutCancel(ctx), ledger.Filter{RunID: req.Resume})
	if err != nil {
		return nil, "", 0, errorf(KindUnavailable, "resume %s: %v", req.Resume, err)
	}
	if len(rows) == 0 {
		return nil, "", 0, errorf(KindNotFound, "the research ledger holds no run %q; `wicket research ledger` lists the runs (the run column)", req.Resume)
	}
	var first *optimizeMark
	costs := p.ledgerCosts()
	for i, r := range rows {
		var a optimizeAudit
		if json.Unmarshal(r.Audit, &a) != nil || a.Optimize == nil || r.Kind != ledger.KindSweep {
			return nil, "", 0, errorf(KindInvalid, "run %s is a %s, not an optimisation; only a run of optimize resumes", req.Resume, r.Kind)
		}
		m := a.Optimize
		if i == 0 {
			first = m
		}
		switch {
		case r.Strategy != p.ledgerName || r.Series != p.base.Series:
			return nil, "", 0, errorf(KindInvalid, "run %s optimised %s on %s, not %s on %s; resume it with the same strategy and series", req.Resume, r.Strategy, r.Series, p.ledgerName, p.base.Series)
		case r.Digest != ledger.SourceDigest(p.base.Source):
			return nil, "", 0, errorf(KindInvalid, "the strategy's source changed since run %s; its trials were of another version, so start a new optimisation", req.Resume)
		case m.Space != ss.text:
			return nil, "", 0, errorf(KindInvalid, "run %s searched the grid %s; resume it with the same grid (this request's is %s)", req.Resume, m.Space, ss.text)
		case m.RankBy != p.rankBy:
			return nil, "", 0, errorf(KindInvalid, "run %s ranks by %s; resume it with rank_by %s", req.Resume, m.RankBy, m.RankBy)
		case m.Method != first.Method || m.Seed != first.Seed:
			return nil, "", 0, errorf(KindInvalid, "run %s's rows disagree on the method and seed; it cannot be resumed", req.Resume)
		}
		if d := costs.Diff(ReadLedgerCosts(r.Costs)); len(d) > 0 {
			return nil, "", 0, errorf(KindInvalid, "run %s ran under other costs (%s); resume it with the costs and intrabar rule it ran under, or start a new optimisation",
				req.Resume, strings.Join(d, "; "))
		}
	}
	if req.Method != "" && method != first.Method {
		return nil, "", 0, errorf(KindInvalid, "run %s used method %s; resume it with that method (or name none)", req.Resume, first.Method)
	}
	if req.Seed != nil && *req.Seed != first.Seed {
		return nil, "", 0, errorf(KindInvalid, "run %s used seed %d; resume it with that seed (or name none)", req.Resume, first.Seed)
	}
	return rows, first.Method, first.Seed, nil
}

// trialOfRow rebuilds a recorded trial.
func trialOfRow(r ledger.Row) *worker.Trial {
	t := &worker.Trial{Metrics: r.Metrics}
	json.Unmarshal(r.Params, &t.Values)
	var a optimizeAudit
	json.Unmarshal(r.Audit, &a)
	t.Stats, t.Blocks = a.Stats, a.Blocks
	if a.Optimize != nil {
		t.Scores = a.Optimize.Scores
	}
	var m struct {
		Error  string `json:"error"`
		Trades int    `json:"trades"`
	}
	json.Unmarshal(r.Metrics, &m)
	t.Trades = m.Trades
	if m.Error != "" {
		t.Error, t.Metrics = m.Error, nil
	}
	return t
}
