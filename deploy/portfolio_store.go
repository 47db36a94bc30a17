package deploy

import (
	"encoding/json"
	"fmt"
	"time"
	"wicket/strategy"
	"wicket/strategy/worker"

	"github.com/shopspring/decimal"
)

// legKey is the journal's key of a leg's bars: the deployment's id and
// the leg's series (the bars table keys bars by deployment).
func legKey(id, series string) string { return id + "/" + series }

// commitLegBars journals the legs' bars (each under legKey), durably.
// A bar journaled twice is kept once.
func (s *Store) commitLegBars(id string, legs []strategy.Bars) error {
	tx, err := s.db.Begin()
	if err != nil {
		return fmt.Errorf("deployments journal: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it does nothing
	for _, b := range legs {
		key := legKey(id, b.Series)
		for i := range b.Time {
			if _, err := tx.Exec(`INSERT OR IGNORE INTO bars VALUES (?, ?, ?, ?, ?, ?, ?)`, key, b.Time[i],
				b.Open[i], b.High[i], b.Low[i], b.Close[i], b.Volume[i]); err != nil {
				return fmt.Errorf("deployments journal: %w", err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("deployments journal: %w", err)
	}
	return nil
}

// accountsKey is the journal's key of a portfolio deployment's accounts
// (the accounts table keys them by deployment).
func accountsKey(id string) string { return id + "/accounts" }

// commitPortfolioAccount journals d's account at the close of the bar at
// (an on_bar portfolio strategy's ctx reads it): its cash, equity and
// each leg's position (a JSON list, in the legs' order).
func (s *Store) commitPortfolioAccount(d *Deployment, at time.Time) error {
	pos := make([]string, len(d.Legs))
	for k, l := range d.Legs {
		pos[k] = l.Position.String()
	}
	doc, err := json.Marshal(pos)
	if err != nil {
		return fmt.Errorf("deployments journal: %w", err)
	}
	if _, err := s.db.Exec(`INSERT INTO accounts VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET position = excluded.position,
		cash = excluded.cash, equity = excluded.equity`, accountsKey(d.ID), at.Unix(), string(doc), d.Cash.String(), d.Equity.String()); err != nil {
		return fmt.Errorf("deployments journal: %w", err)
	}
	return nil
}

// portfolioAccounts reads a portfolio deployment's journaled accounts
// from unix time from on, oldest first, as the worker takes them.
func (s *Store) portfolioAccounts(id string, from int64, legs int) ([]worker.PortfolioAccount, error) {
	rows, err := s.read.Query(`SELECT time, position, cash, equity FROM accounts WHERE deployment = ? AND time >= ? ORDER BY time`, accountsKey(id), from)
	if err != nil {
		return nil, fmt.Errorf("deployments journal: %w", err)
	}
	defer rows.Close()
	var out []worker.PortfolioAccount
	for rows.Next() {
		var (
			t             int64
			doc, cash, eq string
			pos           []string
		)
		if err := rows.Scan(&t, &doc, &cash, &eq); err != nil {
			return nil, fmt.Errorf("deployments journal: %w", err)
		}
		if err := json.Unmarshal([]byte(doc), &pos); err != nil || len(pos) != legs {
			return nil, fmt.Errorf("deployments journal: a portfolio account at %d does not read as %d positions", t, legs)
		}
		a := worker.PortfolioAccount{Time: t, Positions: make([]float64, legs)}
		a.Cash = floatOf(cash)
		a.Equity = floatOf(eq)
		for k, p := range pos {
			a.Positions[k] = floatOf(p)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// floatOf is a journaled decimal as the worker's float64 (0 if it does
// not read).
func floatOf(s string) float64 {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return 0
	}
	f, _ := d.Float64()
	return f
}
