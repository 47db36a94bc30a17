package deploy

import (
	"cmp"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/shopspring/decimal"
	_ "modernc.org/sqlite" // the database/sql driver "sqlite"

	"wicket/strategy"
)

// Store is the deployments' journal (settings/state/deployments.db): each
// deployment as it stands, its bars, its decision at every bar and every
// intent it made, with what came of it. Everything is committed with
// synchronous=FULL before the order it leads to is sent.
//
// Commits are grouped: the batches of deployments committing while a
// commit is in flight are written together in the next transaction, one
// WAL fsync for all, and each Commit returns once its own batch is durable
// (or with its own error: a batch that fails is rolled back alone).
type Store struct {
	db   *sql.DB // the one writing connection
	read *sql.DB // readers, beside the writer (WAL)
	path string

	mu      sync.Mutex
	queue   []*storeWait // batches waiting for the next transaction
	writing bool         // a Commit is writing a group (the leader)
	stats   StoreStats

	// Test hooks, nil outside tests: queued is called when a Commit has
	// joined the queue behind a commit in flight; write with each group's
	// size before it is written.
	queued func()
	write  func(n int)
}

// storeWait is one Commit waiting in the queue: done gets its outcome, or
// errLead when it is to write the next group itself.
type storeWait struct {
	b    Batch
	done chan error
}

// errLead tells a waiting Commit that the group it is in is its to write.
var errLead = errors.New("deployments journal: write the next group")

// StoreStats counts the store's group commits.
type StoreStats struct {
	Batches      int64 // batches the transactions held (one that failed alone counts)
	Transactions int64 // the transactions that committed them
}

// Stats returns the store's counts since it was opened.
func (s *Store) Stats() StoreStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

const schema = `
CREATE TABLE IF NOT EXISTS deployments (id TEXT PRIMARY KEY, doc TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bars (deployment TEXT NOT NULL, time INTEGER NOT NULL,
	open REAL NOT NULL, high REAL NOT NULL, low REAL NOT NULL, close REAL NOT NULL, volume REAL NOT NULL,
	PRIMARY KEY (deployment, time));
CREATE TABLE IF NOT EXISTS decisions (deployment TEXT NOT NULL, bar INTEGER NOT NULL, status TEXT NOT NULL,
	has_target INTEGER NOT NULL, target REAL NOT NULL, equity TEXT NOT NULL, note TEXT NOT NULL, PRIMARY KEY (deployment, bar));
CREATE TABLE IF NOT EXISTS intents (client_order_id TEXT PRIMARY KEY, deployment TEXT NOT NULL, bar INTEGER NOT NULL,
	n INTEGER NOT NULL, doc TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS intents_by_deployment ON intents (deployment, bar);
CREATE TABLE IF NOT EXISTS funding (deployment TEXT NOT NULL, id TEXT NOT NULL, time INTEGER NOT NULL, doc TEXT NOT NULL,
	PRIMARY KEY (deployment, id));
CREATE TABLE IF NOT EXISTS accounts (deployment TEXT NOT NULL, time INTEGER NOT NULL, position TEXT NOT NULL, cash TEXT NOT NULL,
	equity TEXT NOT NULL, PRIMARY KEY (deployment, time));
`

// OpenStore opens (creating) the journal at path.
func OpenStore(path string) (*Store, error) {
	db, err := sql.Open("sqlite", path+"?_journal_mode=WAL&_synchronous=FULL&_busy_timeout=10000&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("open the deployments journal %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("open the deployments journal %s: %w", path, err)
	}
	read, err := sql.Open("sqlite", path+"?_busy_timeout=10000&_query_only=1")
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open the deployments journal %s: %w", path, err)
	}
	read.SetMaxOpenConns(4)
	return &Store{db: db, read: read, path: path}, nil
}

// Close closes the journal.
func (s *Store) Close() error { return errors.Join(s.read.Close(), s.db.Close()) }

// Decision is a deployment's decision at one bar, or why it made none
// (missed: the node was down or the tape had a gap; not_running: paused
// or stopped).
type Decision struct {
	Bar       time.Time `json:"bar"`
	Status    string    `json:"status"` // decided, missed, not_running, failed
	HasTarget bool      `json:"has_target"`
	Target    float64   `json:"target"`
	// Equity is the deployment's equity at the bar's close, before the
	// decision's order.
	Equity decimal.Decimal `json:"equity"`
	Note   string          `json:"note,omitempty"`
}

// The decision statuses.
const (
	DecisionDecided    = "decided"
	DecisionMissed     = "missed"
	DecisionNotRunning = "not_running"
	DecisionFailed     = "failed"
)

// Intent is an order a deployment made at a bar, and what came of it.
type Intent struct {
	ClientOrderID string          `json:"client_order_id"`
	Deployment    string          `json:"deployment"`
	Bar           time.Time       `json:"bar"`
	N             int             `json:"n"`
	Side          string          `json:"side"`
	Quantity      decimal.Decimal `json:"quantity"`
	Target        float64         `json:"target"`
	Status        string          `json:"status"` // sending, proposed, sent, filled, rejected, lapsed, refused, pending
	Filled        decimal.Decimal `json:"filled,omitzero"`
	Price         decimal.Decimal `json:"price,omitzero"`
	Fee           decimal.Decimal `json:"fee,omitzero"`
	Note          string          `json:"note,omitempty"`
	Updated       time.Time       `json:"updated"`
	// FeeAsset and AssetFee are what of Fee the venue charged in another
	// asset (Binance's BNB), in that asset; Fee counts it at its worth in
	// the venue's currency when the node booked it (node/feeasset.go).
	FeeAsset string          `json:"fee_asset,omitempty"`
	AssetFee decimal.Decimal `json:"asset_fee,omitzero"`
	// Type is the command's order type ("" is a market order): a
	// bracket (a market entry with its take-profit and stop-loss), or the
	// protective order placed for a position (oco, stop, limit,
	// trailing_stop), priced by StopPrice, LimitPrice (a limit's or a
	// take-profit's price) and TrailPercent.
	Type         string          `json:"type,omitempty"`
	StopPrice    decimal.Decimal `json:"stop_price,omitzero"`
	LimitPrice   decimal.Decimal `json:"limit_price,omitzero"`
	TrailPercent decimal.Decimal `json:"trail_percent,omitzero"`
	// Exit names the protective leg this intent is (stop_loss,
	// take_profit, trailing_stop; "" for an entry or a target's order);
	// Parent is the client order id of the command that placed it when
	// that is another intent (a bracket's legs): such a leg is never sent
	// on its own, only settled from its fills.
	Exit   string `json:"exit,omitempty"`
	Parent string `json:"parent,omitempty"`
	// Qty: an on_bar strategy asked for the quantity, not a target (no
	// target stands after it).
	Qty bool `json:"qty,omitempty"`
}

// The intent statuses.
const (
	IntentSending  = "sending"  // journaled, about to be sent (a crash here: reconciled at start)
	IntentProposed = "proposed" // waiting for an operator
	IntentPending  = "pending"  // sent; its outcome is not known yet
	IntentFilled   = "filled"
	IntentRejected = "rejected"
	IntentLapsed   = "lapsed"  // a proposal not approved by the next bar, or never sent before a restart
	IntentRefused  = "refused" // not sent: the venue or deployment was not armed
	// IntentCanceled: a protective leg that ended without a fill (another
	// leg of its group filled, the deployment canceled it for a new
	// order, or its entry never filled).
	IntentCanceled = "canceled"
)

// Batch is what one step commits, in one transaction.
type Batch struct {
	Deployment *Deployment
	Bars       []Bar
	Decisions  []Decision
	Intents    []Intent
	Accounts   []Account
	Funding    []FundingPayment // attrib_funding.go
}

// Account is a deployment's own account at a bar's close, as its on_bar
// strategy saw it when deciding there.
type Account struct {
	Bar      time.Time
	Position decimal.Decimal
	Cash     decimal.Decimal
	Equity   decimal.Decimal
}

// Bar is one closed bar of a deployment's series.
type Bar struct {
	Time                           time.Time
	Open, High, Low, Close, Volume float64
}

// Commit writes b durably: it returns once b is committed (with the
// batches of other Commits that waited with it) or with b's own error.
// A Commit that finds no commit in flight writes the group itself; one
// that finds one waits for it, and the first of those waiting then writes
// everything queued meanwhile, so no caller writes more than the group it
// is in.
func (s *Store) Commit(b Batch) error {
	w := &storeWait{b: b, done: make(chan error, 1)}
	s.mu.Lock()
	s.queue = append(s.queue, w)
	lead := !s.writing
	s.writing = true
	s.mu.Unlock()
	if !lead {
		if s.queued != nil {
			s.queued()
		}
		if err := <-w.done; err != errLead {
			return err
		}
	}
	s.mu.Lock()
	group := s.queue // w is in it: only a leader takes the queue
	s.queue = nil
	s.mu.Unlock()
	s.writeGroup(group)
	s.mu.Lock()
	if len(s.queue) > 0 {
		s.queue[0].done <- errLead // its group is its to write
	} else {
		s.writing = false
	}
	s.mu.Unlock()
	return <-w.done
}

// writeGroup writes group in one transaction, each batch under its own
// savepoint, and tells each its outcome once the transaction is durable.
func (s *Store) writeGroup(group []*storeWait) {
	if s.write != nil {
		s.write(len(group))
	}
	errs := make([]error, len(group))
	tell := func(err error) {
		for i, w := range group {
			w.done <- cmp.Or(errs[i], err)
		}
	}
	tx, err := s.db.Begin()
	if err != nil {
		tell(fmt.Errorf("deployments journal: %w", err))
		return
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it does nothing
	for i, w := range group {
		if _, err := tx.Exec(`SAVEPOINT batch`); err != nil {
			tell(fmt.Errorf("deployments journal: %w", err))
			return
		}
		if errs[i] = writeBatch(tx, w.b); errs[i] != nil {
			if _, err := tx.Exec(`ROLLBACK TO batch`); err != nil {
				tell(fmt.Errorf("deployments journal: %w", err))
				return
			}
		}
		if _, err := tx.Exec(`RELEASE batch`); err != nil {
			tell(fmt.Errorf("deployments journal: %w", err))
			return
		}
	}
	if err := tx.Commit(); err != nil {
		tell(fmt.Errorf("deployments journal: %w", err))
		return
	}
	s.mu.Lock()
	s.stats.Transactions++
	s.stats.Batches += int64(len(group))
	s.mu.Unlock()
	tell(nil)
}

// writeBatch writes b in tx.
func writeBatch(tx *sql.Tx, b Batch) error {
	if d := b.Deployment; d != nil {
		doc, err := json.Marshal(d)
		if err != nil {
			return fmt.Errorf("deployments journal: %w", err)
		}
		if _, err := tx.Exec(`INSERT INTO deployments (id, doc) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc`, d.ID, string(doc)); err != nil {
			return fmt.Errorf("deployments journal: %w", err)
		}
		for _, bar := range b.Bars {
			if _, err := tx.Exec(`INSERT OR IGNORE INTO bars VALUES (?, ?, ?, ?, ?, ?, ?)`, d.ID, bar.Time.Unix(),
				bar.Open, bar.High, bar.Low, bar.Close, bar.Volume); err != nil {
				return fmt.Errorf("deployments journal: %w", err)
			}
		}
		for _, a := range b.Accounts {
			if _, err := tx.Exec(`INSERT INTO accounts VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET position = excluded.position,
				cash = excluded.cash, equity = excluded.equity`, d.ID, a.Bar.Unix(), a.Position.String(), a.Cash.String(), a.Equity.String()); err != nil {
				return fmt.Errorf("deployments journal: %w", err)
			}
		}
		for _, dc := range b.Decisions {
			if _, err := tx.Exec(`INSERT INTO decisions VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET status = excluded.status,
				has_target = excluded.has_target, target = excluded.target, equity = excluded.equity, note = excluded.note`,
				d.ID, dc.Bar.Unix(), dc.Status, dc.HasTarget, dc.Target, dc.Equity.String(), dc.Note); err != nil {
				return fmt.Errorf("deployments journal: %w", err)
			}
		}
	}
	if err := commitFunding(tx, b); err != nil {
		return err
	}
	for _, in := range b.Intents {
		doc, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("deployments journal: %w", err)
		}
		if _, err := tx.Exec(`INSERT INTO intents VALUES (?, ?, ?, ?, ?) ON CONFLICT (client_order_id) DO UPDATE SET doc = excluded.doc`,
			in.ClientOrderID, in.Deployment, in.Bar.Unix(), in.N, string(doc)); err != nil {
			return fmt.Errorf("deployments journal: %w", err)
		}
	}
	return nil
}

// Deployments reads every deployment, oldest first.
func (s *Store) Deployments() ([]*Deployment, error) {
	rows, err := s.read.Query(`SELECT doc FROM deployments ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("deployments journal: %w", err)
	}
	defer rows.Close()
	var out []*Deployment
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return nil, fmt.Errorf("deployments journal: %w", err)
		}
		var d Deployment
		if err := json.Unmarshal([]byte(doc), &d); err != nil {
			return nil, fmt.Errorf("deployments journal: a deployment row does not read: %w", err)
		}
		out = append(out, &d)
	}
	return out, rows.Err()
}

// Bars reads a deployment's recorded bars, oldest first (at most the last
// limit).
func (s *Store) Bars(id, series string, limit int) (strategy.Bars, error) {
	rows, err := s.read.Query(`SELECT time, open, high, low, close, volume FROM
		(SELECT * FROM bars WHERE deployment = ? ORDER BY time DESC LIMIT ?) ORDER BY time`, id, limit)
	if err != nil {
		return strategy.Bars{}, fmt.Errorf("deployments journal: %w", err)
	}
	return scanBars(rows, series)
}

// scanBars reads rows of (time, open, high, low, close, volume), oldest
// first, as series' bars, and closes them.
func scanBars(rows *sql.Rows, series string) (strategy.Bars, error) {
	defer rows.Close()
	b := strategy.Bars{Series: series}
	for rows.Next() {
		var t int64
		var o, h, l, c, v float64
		if err := rows.Scan(&t, &o, &h, &l, &c, &v); err != nil {
			return b, fmt.Errorf("deployments journal: %w", err)
		}
		appendBar(&b, t, o, h, l, c, v)
	}
	return b, rows.Err()
}

// Accounts reads a deployment's accounts at the bars from from on, by
// bar time.
func (s *Store) Accounts(id string, from time.Time) (map[int64]Account, error) {
	rows, err := s.read.Query(`SELECT time, position, cash, equity FROM accounts WHERE deployment = ? AND time >= ?`, id, from.Unix())
	if err != nil {
		return nil, fmt.Errorf("deployments journal: %w", err)
	}
	defer rows.Close()
	out := map[int64]Account{}
	for rows.Next() {
		var t int64
		var p, c, e string
		if err := rows.Scan(&t, &p, &c, &e); err != nil {
			return nil, fmt.Errorf("deployments journal: %w", err)
		}
		a := Account{Bar: time.Unix(t, 0).UTC()}
		a.Position, _ = decimal.NewFromString(p)
		a.Cash, _ = decimal.NewFromString(c)
		a.Equity, _ = decimal.NewFromString(e)
		out[t] = a
	}
	return out, rows.Err()
}

// Decisions reads a deployment's decisions, oldest first.
func (s *Store) Decisions(id string) ([]Decision, error) {
	rows, err := s.read.Query(`SELECT bar, status, has_target, target, equity, note FROM decisions WHERE deployment = ? ORDER BY bar`, id)
	if err != nil {
		return nil, fmt.Errorf("deployments journal: %w", err)
	}
	defer rows.Close()
	var out []Decision
	for rows.Next() {
		var t int64
		var d Decision
		var eq string
		if err := rows.Scan(&t, &d.Status, &d.HasTarget, &d.Target, &eq, &d.Note); err != nil {
			return nil, fmt.Errorf("deployments journal: %w", err)
		}
		d.Equity, _ = decimal.NewFromString(eq)
		d.Bar = time.Unix(t, 0).UTC()
		out = append(out, d)
	}
	return out, rows.Err()
}

// Intents reads a deployment's intents, oldest first.
func (s *Store) Intents(id string) ([]Intent, error) {
	rows, err := s.read.Query(`SELECT doc FROM intents WHERE deployment = ? ORDER BY bar, n`, id)
	if err != nil {
		return nil, fmt.Errorf("deployments journal: %w", err)
	}
	return readIntents(rows)
}

func readIntents(rows *sql.Rows) ([]Intent, error) {
	defer rows.Close()
	var out []Intent
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return nil, fmt.Errorf("deployments journal: %w", err)
		}
		var in Intent
		if err := json.Unmarshal([]byte(doc), &in); err != nil {
			return nil, fmt.Errorf("deployments journal: an intent row does not read: %w", err)
		}
		out = append(out, in)
	}
	return out, rows.Err()
}

// OpenIntents reads a deployment's intents not settled yet (sending or
// pending), oldest first.
func (s *Store) OpenIntents(id string) ([]Intent, error) {
	rows, err := s.read.Query(`SELECT doc FROM intents WHERE deployment = ? AND json_extract(doc, '$.status') IN (?, ?) ORDER BY bar, n`,
		id, IntentSending, IntentPending)
	if err != nil {
		return nil, fmt.Errorf("deployments journal: %w", err)
	}
	return readIntents(rows)
}

// Intent reads one intent by client order id.
func (s *Store) Intent(cid string) (Intent, bool, error) {
	var doc string
	err := s.read.QueryRow(`SELECT doc FROM intents WHERE client_order_id = ?`, cid).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return Intent{}, false, nil
	}
	if err != nil {
		return Intent{}, false, fmt.Errorf("deployments journal: %w", err)
	}
	var in Intent
	if err := json.Unmarshal([]byte(doc), &in); err != nil {
		return Intent{}, false, fmt.Errorf("deployments journal: an intent row does not read: %w", err)
	}
	return in, true, nil
}

func appendBar(b *strategy.Bars, t int64, o, h, l, c, v float64) {
	b.Time = append(b.Time, t)
	b.Open = append(b.Open, o)
	b.High = append(b.High, h)
	b.Low = append(b.Low, l)
	b.Close = append(b.Close, c)
	b.Volume = append(b.Volume, v)
}
