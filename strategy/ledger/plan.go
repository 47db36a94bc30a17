package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Research plans (strategy.md, "Research plans"): a plan is a row of its
// own kind, written before the trials it governs and chained and anchored
// like them, so a plan edited after the fact breaks the chain where it
// stands. It binds the strategy's content digest: every counted trial of
// that digest after the plan's row, under any name, is the plan's until
// its verdict, which is a row of its own too (one per plan).
const (
	KindPlan    = "plan"
	KindVerdict = "verdict"
)

// Run ids of plan and verdict rows: the plan's name behind a prefix, so
// a plan is found by its indexed run id.
const (
	planRunPrefix    = "plan:"
	verdictRunPrefix = "verdict:"
)

// Criterion is one of a plan's success criteria: Metric Op Value, e.g.
// dsr >= 0.95. The metrics and operators are research's to define.
type Criterion struct {
	Metric string  `json:"metric"`
	Op     string  `json:"op"`
	Value  float64 `json:"value"`
}

// String is the criterion as written: "dsr>=0.95".
func (c Criterion) String() string {
	return fmt.Sprintf("%s%s%s", c.Metric, c.Op, formatValue(c.Value))
}

func formatValue(v float64) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// PlanSpec is what a plan seals (a plan row's params).
type PlanSpec struct {
	Name       string      `json:"name"`
	Hypothesis string      `json:"hypothesis"`
	Criteria   []Criterion `json:"criteria"`
	MaxTrials  int         `json:"max_trials"`
	// HoldoutFrom and HoldoutTo bound the holdout (RFC 3339, both
	// inclusive; an empty end is open). They are the row's range too.
	HoldoutFrom string `json:"holdout_from"`
	HoldoutTo   string `json:"holdout_to,omitempty"`
	// Grid is the grid or search space the plan's trials explore.
	Grid json.RawMessage `json:"grid,omitempty"`
}

// Plan is a sealed plan as the ledger holds it: its row, its spec, how
// many counted trials of its digest came after it (up to its verdict),
// and its verdict row when it has one.
type Plan struct {
	Row     Row      `json:"row"`
	Spec    PlanSpec `json:"spec"`
	Trials  int      `json:"trials"`
	Verdict *Row     `json:"verdict,omitempty"`
}

// Open reports whether the plan still takes trials: it has no verdict.
func (p Plan) Open() bool { return p.Verdict == nil }

// ErrNoPlan is returned for a plan name the ledger does not hold.
var ErrNoPlan = errors.New("no research plan of that name")

// ErrPlanExists is returned by SealPlan for a name already sealed.
var ErrPlanExists = errors.New("a research plan of that name is already sealed")

// ErrPlanOpen is returned by SealPlan when the strategy's content is
// already under an open plan.
var ErrPlanOpen = errors.New("the strategy's content is already under an open plan")

// ErrVerdictGiven is returned by AppendVerdict for a plan judged before.
var ErrVerdictGiven = errors.New("the plan's verdict was given already")

// SealPlan appends row, a plan row (its Params are spec, its range the
// holdout), in a transaction that first checks that no plan of the name
// exists and that no open plan binds the same digest. It fills row.
func (l *Ledger) SealPlan(ctx context.Context, spec PlanSpec, row *Row) error {
	if spec.Name == "" || row.Digest == "" {
		return errors.New("research ledger: a plan needs a name and the strategy's digest")
	}
	row.Kind, row.RunID = KindPlan, planRunPrefix+spec.Name
	row.From, row.To = spec.HoldoutFrom, spec.HoldoutTo
	b, err := json.Marshal(spec)
	if err != nil {
		return fmt.Errorf("research ledger: %w", err)
	}
	row.Params = b
	rows := []Row{*row}
	_, err = l.appendIf(ctx, rows, func(ctx context.Context, tx *sql.Tx) error {
		if p, err := planNamed(ctx, tx, spec.Name); err == nil {
			return fmt.Errorf("%w: %q was sealed at row %d on %s; choose another name", ErrPlanExists, spec.Name, p.Row.Seq, p.Row.Time)
		} else if !errors.Is(err, ErrNoPlan) {
			return err
		}
		open, err := openPlanOf(ctx, tx, row.Digest)
		if err != nil {
			return err
		}
		if open != nil {
			return fmt.Errorf("%w %q (row %d, %d of %d trials); judge it first (research verdict %s)",
				ErrPlanOpen, open.Spec.Name, open.Row.Seq, open.Trials, open.Spec.MaxTrials, open.Spec.Name)
		}
		return nil
	})
	*row = rows[0]
	return err
}

// AppendVerdict appends row, the verdict of plan (Params and Metrics as
// the caller fills them), in a transaction that first checks that the
// plan has no verdict yet: a plan is judged once.
func (l *Ledger) AppendVerdict(ctx context.Context, plan string, row *Row) error {
	row.Kind, row.RunID = KindVerdict, verdictRunPrefix+plan
	rows := []Row{*row}
	_, err := l.appendIf(ctx, rows, func(ctx context.Context, tx *sql.Tx) error {
		p, err := planNamed(ctx, tx, plan)
		if err != nil {
			return err
		}
		if p.Verdict != nil {
			return fmt.Errorf("%w: plan %q was judged at row %d on %s", ErrVerdictGiven, plan, p.Verdict.Seq, p.Verdict.Time)
		}
		return nil
	})
	*row = rows[0]
	return err
}

// Plan is the plan named name, with its trial count and verdict.
func (l *Ledger) Plan(ctx context.Context, name string) (Plan, error) {
	return planNamed(ctx, l.db, name)
}

// OpenPlanOf is the open plan binding digest, or nil.
func (l *Ledger) OpenPlanOf(ctx context.Context, digest string) (*Plan, error) {
	return openPlanOf(ctx, l.db, digest)
}

// PlanOfDigest is the latest plan sealed for a strategy's content digest
// (SourceDigest of its text), open or judged, with its verdict: what a
// deployment shows of the research behind a strategy. nil when none.
func (l *Ledger) PlanOfDigest(ctx context.Context, digest string) (*Plan, error) {
	rows, err := queryRows(ctx, l.db, `WHERE kind = ? AND digest = ? ORDER BY seq DESC LIMIT 1`, KindPlan, digest)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	p, err := completePlan(ctx, l.db, rows[0])
	return &p, err
}

// PlanTrials is the counted trials of p (oldest first): every counted
// row of its digest after its row and before its verdict.
func (l *Ledger) PlanTrials(ctx context.Context, p Plan) ([]Row, error) {
	where, args := planTrialsWhere(p)
	return queryRows(ctx, l.db, where+` ORDER BY seq`, args...)
}

type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

func queryRows(ctx context.Context, db querier, where string, args ...any) ([]Row, error) {
	rs, err := db.QueryContext(ctx, `SELECT `+columns+` FROM trials `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("research ledger: %w", err)
	}
	defer rs.Close()
	var out []Row
	for rs.Next() {
		r, err := scanRow(rs)
		if err != nil {
			return nil, fmt.Errorf("research ledger: %w", err)
		}
		out = append(out, r)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("research ledger: %w", err)
	}
	return out, nil
}

func planNamed(ctx context.Context, db querier, name string) (Plan, error) {
	rows, err := queryRows(ctx, db, `WHERE run_id = ? AND kind = ? ORDER BY seq LIMIT 1`, planRunPrefix+name, KindPlan)
	if err != nil {
		return Plan{}, err
	}
	if len(rows) == 0 {
		return Plan{}, fmt.Errorf("%w: %q (research plans lists the sealed ones)", ErrNoPlan, name)
	}
	return completePlan(ctx, db, rows[0])
}

func openPlanOf(ctx context.Context, db querier, digest string) (*Plan, error) {
	rows, err := queryRows(ctx, db, `WHERE kind = ? AND digest = ? ORDER BY seq`, KindPlan, digest)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		p, err := completePlan(ctx, db, r)
		if err != nil {
			return nil, err
		}
		if p.Open() {
			return &p, nil
		}
	}
	return nil, nil
}

// completePlan reads row's spec, verdict and trial count.
func completePlan(ctx context.Context, db querier, row Row) (Plan, error) {
	p := Plan{Row: row}
	if err := json.Unmarshal(row.Params, &p.Spec); err != nil {
		return Plan{}, fmt.Errorf("research ledger: plan row %d: %w", row.Seq, err)
	}
	v, err := queryRows(ctx, db, `WHERE run_id = ? AND kind = ? ORDER BY seq LIMIT 1`, verdictRunPrefix+p.Spec.Name, KindVerdict)
	if err != nil {
		return Plan{}, err
	}
	if len(v) > 0 {
		p.Verdict = &v[0]
	}
	where, args := planTrialsWhere(p)
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM trials `+where, args...).Scan(&p.Trials); err != nil {
		return Plan{}, fmt.Errorf("research ledger: %w", err)
	}
	return p, nil
}

// planTrialsWhere selects p's counted trials.
func planTrialsWhere(p Plan) (string, []any) {
	args := []any{p.Row.Digest, p.Row.Seq}
	marks := make([]string, len(CountedKinds))
	for i, k := range CountedKinds {
		marks[i] = "?"
		args = append(args, k)
	}
	where := `WHERE digest = ? AND seq > ? AND kind IN (` + strings.Join(marks, ", ") + `)`
	if p.Verdict != nil {
		where += ` AND seq < ?`
		args = append(args, p.Verdict.Seq)
	}
	return where, args
}
