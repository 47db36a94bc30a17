// Package alpaca is the node's adapter for an Alpaca trading account
// (environment paper, the default, or live), through
// github.com/alpacahq/alpaca-trade-api-go/v3 for the trading and market
// data REST APIs, and the trading API's documented websocket
// (trade_updates) for order updates.
//
// It maps the node's vocabulary to Alpaca's: market/limit × gtc/ioc; stop,
// stop_limit and trailing_stop as Alpaca's own types; an oco or a bracket
// as one order with its order_class, whose child legs Alpaca names and the
// adapter maps to the node's leg ids; modify as Alpaca's replace (PATCH /v2/orders/{id}), instruments from the
// assets API (fractionable, shortable, and for crypto min_order_size,
// min_trade_increment, price_increment), cash and buying power from the
// account, positions from /v2/positions. The node's client order id
// (wk-<uuidv7>) travels as Alpaca's client_order_id as it is; a
// replacement carries it with a .rN suffix, read back by NodeID. Symbols
// travel in Alpaca's own spelling from the venue's symbol table
// (internal/instrument, with [symbols.alpaca]): wicket's BTC-USD is
// Alpaca's BTC/USD (and BTCUSD in positions), SPY is SPY; they come back as
// the venue's symbols list writes them.
//
// It never resends a write: a submit, cancel or replace whose answer is
// lost is node.ErrVenueUnknown. Reads and lookups retry a bounded number
// of times; 429 answers close a gate until Retry-After (the library's own
// 429 retry never runs: the transport answers first). It never logs,
// returns or wraps a key (Secrets names them to the node, only so that it
// can scrub them), and never rounds a quantity or price.
package alpaca

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	alp "github.com/alpacahq/alpaca-trade-api-go/v3/alpaca"
	"github.com/alpacahq/alpaca-trade-api-go/v3/marketdata"
	"github.com/shopspring/decimal"

	"wicket/internal/instrument"
	"wicket/internal/project"
	"wicket/node"
	"wicket/node/guardrail"
	"wicket/node/venuecall"
)

// Endpoints of the environments (Alpaca docs: "Paper Trading", "Trading
// API", "Websocket Streaming" and "Market Data API").
const (
	PaperREST = "https://paper-api.alpaca.markets"
	LiveREST  = "https://api.alpaca.markets"
	DataREST  = "https://data.alpaca.markets"
)

// Config configures an Adapter.
type Config struct {
	Venue     project.Venue // kind alpaca; Environment, Symbols and BaseURL are read
	KeyID     string
	Secret    string
	Timeout   time.Duration // per HTTP request (default 10s)
	Now       func() time.Time
	Transport http.RoundTripper
}

// Adapter is one Alpaca trading account.
type Adapter struct {
	name, env      string
	rest, data, ws string
	keyID, secret  string
	c              *alp.Client
	md             *marketdata.Client
	http           *http.Client
	tr             *venuecall.Transport

	syms instrument.Map // the node's symbols → Alpaca's (BTC-USD → BTC/USD)

	mu       sync.Mutex
	toVenue  map[string]string // wicket symbol → Alpaca's
	toNode   map[string]string // Alpaca's forms (BTC/USD, BTCUSD) → wicket symbol
	crypto   map[string]bool   // wicket symbol → a crypto pair
	replaced map[string]int    // node client order id → replacements so far
	prior    map[string]fills  // order id of a replacement → the fills of the incarnations before it
	legs     map[string]string // Alpaca order id of a child leg → the node's client order id for it
}

// fills is a filled quantity and its notional.
type fills struct{ qty, notional decimal.Decimal }

func (f fills) add(g fills) fills { return fills{f.qty.Add(g.qty), f.notional.Add(g.notional)} }

func own(o *alp.Order) fills {
	f := fills{qty: o.FilledQty}
	if o.FilledAvgPrice != nil {
		f.notional = o.FilledQty.Mul(*o.FilledAvgPrice)
	}
	return f
}

func (a *Adapter) priorOf(id string) (fills, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	f, ok := a.prior[id]
	return f, ok
}

func (a *Adapter) setPrior(id string, f fills) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.prior[id] = f
}

// cumulative adds the incarnations before o to its report, so it tells
// the order's whole life.
func (a *Adapter) cumulative(o *alp.Order) node.VenueOrder {
	vo := a.fromOrder(o)
	p, ok := a.priorOf(o.ID)
	if !ok || p.qty.IsZero() {
		return vo
	}
	notional := own(o).notional.Add(p.notional)
	vo.Quantity, vo.Filled, vo.Notional = vo.Quantity.Add(p.qty), vo.Filled.Add(p.qty), notional
	if vo.Filled.IsPositive() {
		vo.AveragePrice = notional.DivRound(vo.Filled, 10)
	}
	return vo
}

// New makes an adapter. It reaches nothing until called.
func New(cfg Config) (*Adapter, error) {
	if cfg.KeyID == "" || cfg.Secret == "" {
		return nil, fmt.Errorf("venue %s: alpaca keys missing: set %s and %s in the environment or settings/secrets.env",
			cfg.Venue.Name, project.KeyAlpacaID, project.KeyAlpacaSecret)
	}
	set, err := venuecall.NewSetup(cfg.Venue, venuecall.Endpoints{REST: PaperREST}, venuecall.Endpoints{REST: LiveREST}, "/stream",
		cfg.Transport, cfg.Timeout, cfg.Now)
	if err != nil {
		return nil, err
	}
	rest, data, hc := set.REST, DataREST, set.HTTP
	if cfg.Venue.BaseURL != "" {
		data = rest // a fake (or a proxy) serves both
	}
	a := &Adapter{name: cfg.Venue.Name, env: cfg.Venue.Environment, rest: rest, data: data,
		ws: set.Stream, keyID: cfg.KeyID, secret: cfg.Secret,
		http: hc, tr: set.Transport, toVenue: map[string]string{}, toNode: map[string]string{}, crypto: map[string]bool{}, replaced: map[string]int{}, prior: map[string]fills{}, legs: map[string]string{}}
	a.c = alp.NewClient(alp.ClientOpts{APIKey: cfg.KeyID, APISecret: cfg.Secret, BaseURL: rest, HTTPClient: hc, RetryLimit: 1, RetryDelay: time.Millisecond})
	a.md = marketdata.NewClient(marketdata.ClientOpts{APIKey: cfg.KeyID, APISecret: cfg.Secret, BaseURL: data, HTTPClient: hc,
		RetryLimit: 1, RetryDelay: time.Millisecond, Feed: marketdata.IEX})
	if a.syms = cfg.Venue.Instruments(); a.syms.Kind() == instrument.Paper { // a table without a kind (tests): alpaca's own
		a.syms, _ = instrument.For(instrument.Alpaca, cfg.Venue.SymbolOverrides)
	}
	for _, s := range cfg.Venue.Symbols {
		vs, err := a.syms.Venue(s)
		if err != nil {
			vs = s // alpaca refuses it at the start, naming it
		}
		a.toVenue[s], a.toNode[vs], a.toNode[strings.ReplaceAll(vs, "/", "")] = vs, s, s
		a.crypto[s] = strings.Contains(vs, "/")
	}
	return a, nil
}

// Kind is "alpaca".
func (a *Adapter) Kind() string { return project.KindAlpaca }

// Environment is paper or live.
func (a *Adapter) Environment() string { return a.env }

// MarkSource says where marks come from.
func (a *Adapter) MarkSource() string {
	return "alpaca market data: latest trades (IEX for stocks, us for crypto)"
}

func (a *Adapter) venueSymbol(s string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if v, ok := a.toVenue[s]; ok {
		return v
	}
	if v, err := a.syms.Venue(s); err == nil {
		return v
	}
	return s
}

func (a *Adapter) nodeSymbol(s string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if v, ok := a.toNode[s]; ok {
		return v
	}
	return s
}

// --- client order ids ---

var replacementRE = regexp.MustCompile(`\.r[0-9]+$`)

// NodeID is the node's client order id of an Alpaca client_order_id: as
// is, without a replacement's .rN suffix.
func NodeID(venueID string) string { return replacementRE.ReplaceAllString(venueID, "") }

// --- errors ---

// classify turns a library error into the node's kinds.
func (a *Adapter) classify(err error) error {
	if err == nil {
		return nil
	}
	var api *alp.APIError
	if errors.As(err, &api) {
		if api.StatusCode == http.StatusNotFound {
			return &node.VenueError{Kind: node.ErrVenueNotFound, Venue: a.name, Message: api.Message}
		}
		return &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name, Message: fmt.Sprintf("HTTP %d: %s", api.StatusCode, api.Message)}
	}
	return venuecall.Classify(a.name, err)
}

// --- reads ---

// assetRules are the assets API's increments for crypto pairs (the
// library's Asset does not carry them).
type assetRules struct {
	Symbol            string          `json:"symbol"`
	Class             string          `json:"class"`
	Tradable          bool            `json:"tradable"`
	Fractionable      bool            `json:"fractionable"`
	Shortable         bool            `json:"shortable"`
	EasyToBorrow      bool            `json:"easy_to_borrow"`
	MinOrderSize      decimal.Decimal `json:"min_order_size"`
	MinTradeIncrement decimal.Decimal `json:"min_trade_increment"`
	PriceIncrement    decimal.Decimal `json:"price_increment"`
}

func (a *Adapter) asset(ctx context.Context, symbol string) (assetRules, error) {
	var out assetRules
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.rest+"/v2/assets/"+url.PathEscape(symbol), nil)
	if err != nil {
		return out, err
	}
	req.Header.Set("APCA-API-KEY-ID", a.keyID)
	req.Header.Set("APCA-API-SECRET-KEY", a.secret)
	resp, err := a.http.Do(req)
	if err != nil {
		return out, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return out, alp.APIErrorFromResponse(resp)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&out); err != nil {
		return out, fmt.Errorf("asset %s: %w", symbol, err)
	}
	return out, nil
}

// Instruments reads each symbol's asset: stocks trade on a cent tick, in
// whole shares unless fractionable; crypto pairs carry their own
// increments.
func (a *Adapter) Instruments(ctx context.Context, symbols []string) (map[string]guardrail.Instrument, error) {
	out := map[string]guardrail.Instrument{}
	for _, s := range symbols {
		vs := a.venueSymbol(s)
		as, err := venuecall.Read(ctx, a.tr, func() (assetRules, error) { return a.asset(ctx, vs) })
		if notFound(err) {
			return nil, a.unknownSymbol(ctx, s)
		}
		if err != nil {
			return nil, a.classify(err)
		}
		if !as.Tradable {
			return nil, fmt.Errorf("%s: alpaca says %s is not tradable", a.name, vs)
		}
		in := guardrail.Instrument{Tick: decimal.New(1, -2), Fractional: as.Fractionable, Shortable: as.Shortable && as.EasyToBorrow}
		if as.Fractionable {
			in.Step = decimal.New(1, -9)
		} else {
			in.Step = decimal.NewFromInt(1)
		}
		if as.Class == string(alp.Crypto) {
			in.Shortable = false
			if as.PriceIncrement.IsPositive() {
				in.Tick = as.PriceIncrement
			}
			if as.MinTradeIncrement.IsPositive() {
				in.Step = as.MinTradeIncrement
			}
			in.MinQuantity = as.MinOrderSize
		}
		a.mu.Lock()
		a.crypto[s] = as.Class == string(alp.Crypto)
		a.mu.Unlock()
		out[s] = in
	}
	return out, nil
}

func notFound(err error) bool {
	var api *alp.APIError
	return errors.As(err, &api) && api.StatusCode == http.StatusNotFound
}

// unknownSymbol is the error for a symbol Alpaca has no asset for, naming
// the wicket spelling of the asset Alpaca lists for the same pair when
// there is one (BTCUSD or btc-usd: BTC-USD, which travels as BTC/USD). A
// read that fails otherwise is returned as it is.
func (a *Adapter) unknownSymbol(ctx context.Context, s string) error {
	msg := fmt.Sprintf("alpaca has no asset %s", a.venueSymbol(s))
	if vs := a.venueSymbol(s); vs != s {
		msg += " (" + s + " in wicket.toml)"
	}
	for _, c := range alpacaCandidates(s) {
		_, err := venuecall.Read(ctx, a.tr, func() (assetRules, error) { return a.asset(ctx, c) })
		if notFound(err) {
			continue
		}
		if err != nil {
			return a.classify(err)
		}
		msg += fmt.Sprintf(" (alpaca lists %s, written %s in wicket.toml)", c, strings.ReplaceAll(c, "/", "-"))
		break
	}
	return &node.VenueError{Kind: node.ErrUnknownSymbol, Venue: a.name, Message: msg +
		fmt.Sprintf(": write alpaca's symbols in the symbols list of venue %s in wicket.toml (stocks as SPY, crypto pairs as BTC-USD), or map one in [symbols.alpaca]", a.name)}
}

// alpacaCandidates are Alpaca's likely spellings of a symbol written
// another way: upper case, and a crypto pair with its slash.
func alpacaCandidates(s string) []string {
	up := strings.ReplaceAll(strings.ToUpper(s), "-", "/")
	var out []string
	if up != strings.ReplaceAll(s, "-", "/") {
		out = append(out, up)
	}
	if !strings.Contains(up, "/") {
		for _, q := range []string{"USD", "USDT", "USDC", "BTC"} {
			if base, ok := strings.CutSuffix(up, q); ok && base != "" {
				out = append(out, base+"/"+q)
			}
		}
	}
	return out
}

// Account reads cash, buying power and positions.
func (a *Adapter) Account(ctx context.Context) (node.Account, error) {
	acct, err := venuecall.Read(ctx, a.tr, a.c.GetAccount)
	if err != nil {
		return node.Account{}, a.classify(err)
	}
	pos, err := venuecall.Read(ctx, a.tr, a.c.GetPositions)
	if err != nil {
		return node.Account{}, a.classify(err)
	}
	out := node.Account{ID: acct.AccountNumber, Currency: acct.Currency, Cash: acct.Cash, BuyingPower: acct.BuyingPower}
	for _, p := range pos {
		q := p.Qty
		if p.Side == "short" && q.IsPositive() {
			q = q.Neg()
		}
		out.Positions = append(out.Positions, node.VenuePosition{Symbol: a.nodeSymbol(p.Symbol), Quantity: q, AveragePrice: p.AvgEntryPrice})
	}
	return out, nil
}

// Marks reads the latest trades from the market data API.
func (a *Adapter) Marks(ctx context.Context, symbols []string) (map[string]decimal.Decimal, error) {
	var stocks, pairs []string
	a.mu.Lock()
	for _, s := range symbols {
		if a.crypto[s] {
			pairs = append(pairs, a.toVenue[s])
		} else {
			stocks = append(stocks, a.toVenue[s])
		}
	}
	a.mu.Unlock()
	out := map[string]decimal.Decimal{}
	if len(stocks) > 0 {
		trades, err := venuecall.Read(ctx, a.tr, func() (map[string]marketdata.Trade, error) {
			return a.md.GetLatestTrades(stocks, marketdata.GetLatestTradeRequest{})
		})
		if err != nil {
			return nil, a.classify(err)
		}
		for s, tr := range trades {
			out[a.nodeSymbol(s)] = decimal.NewFromFloat(tr.Price)
		}
	}
	if len(pairs) > 0 {
		trades, err := venuecall.Read(ctx, a.tr, func() (map[string]marketdata.CryptoTrade, error) {
			return a.md.GetLatestCryptoTrades(pairs, marketdata.GetLatestCryptoTradeRequest{})
		})
		if err != nil {
			return nil, a.classify(err)
		}
		for s, tr := range trades {
			out[a.nodeSymbol(s)] = decimal.NewFromFloat(tr.Price)
		}
	}
	return out, nil
}

// Lookup reads one order by its Alpaca id, else by client order id, and
// follows replaced_by to the newest incarnation, summing the fills.
func (a *Adapter) Lookup(ctx context.Context, o node.VenueOrder) (node.VenueOrder, error) {
	got, err := venuecall.Read(ctx, a.tr, func() (*alp.Order, error) {
		if o.VenueOrderID != "" {
			return a.c.GetOrder(o.VenueOrderID)
		}
		return a.c.GetOrderByClientOrderID(o.ClientOrderID)
	})
	if notFound(err) && o.VenueOrderID == "" {
		if vo, ok, lerr := a.lookupLeg(ctx, o.ClientOrderID); ok || lerr != nil {
			return vo, lerr
		}
	}
	if err != nil {
		return node.VenueOrder{}, a.classify(err)
	}
	a.adoptLegs(got)
	for hops := 0; got.Status == "replaced" && got.ReplacedBy != nil && hops < 64; hops++ {
		before, _ := a.priorOf(got.ID)
		next, err := venuecall.Read(ctx, a.tr, func() (*alp.Order, error) { return a.c.GetOrder(*got.ReplacedBy) })
		if err != nil {
			return node.VenueOrder{}, a.classify(err)
		}
		if _, known := a.priorOf(next.ID); !known {
			a.setPrior(next.ID, before.add(own(got)))
		}
		got = next
	}
	return a.cumulative(got), nil
}

// lookupLeg finds a child leg by the node's id for it (its group's id and
// a leg suffix): Alpaca names children itself, so the leg is read from
// its parent's legs. ok is false when the id names no leg.
func (a *Adapter) lookupLeg(ctx context.Context, nodeID string) (node.VenueOrder, bool, error) {
	for _, suffix := range []string{node.StopLegSuffix, node.TakeProfitLegSuffix} {
		parent, isLeg := strings.CutSuffix(nodeID, suffix)
		if !isLeg || parent == "" {
			continue
		}
		p, err := venuecall.Read(ctx, a.tr, func() (*alp.Order, error) { return a.c.GetOrderByClientOrderID(parent) })
		if notFound(err) {
			return node.VenueOrder{}, false, nil
		}
		if err != nil {
			return node.VenueOrder{}, true, a.classify(err)
		}
		a.adoptLegs(p)
		for i := range p.Legs {
			if id, _ := a.legName(p.Legs[i].ID); id == nodeID {
				return a.fromOrder(&p.Legs[i]), true, nil
			}
		}
		return node.VenueOrder{}, false, nil
	}
	return node.VenueOrder{}, false, nil
}

// OpenOrders lists the open orders of the symbols.
func (a *Adapter) OpenOrders(ctx context.Context, symbols []string) ([]node.VenueOrder, error) {
	vs := make([]string, len(symbols))
	for i, s := range symbols {
		vs[i] = a.venueSymbol(s)
	}
	list, err := venuecall.Read(ctx, a.tr, func() ([]alp.Order, error) {
		return a.c.GetOrders(alp.GetOrdersRequest{Status: "open", Symbols: vs, Limit: 500, Nested: true})
	})
	if err != nil {
		return nil, a.classify(err)
	}
	// Nested: an order_class order comes with its children under legs;
	// each open one is listed, under the node's id for it.
	var flat []alp.Order
	for i := range list {
		a.adoptLegs(&list[i])
		if stateOf(list[i].Status) == node.VenueOpen {
			flat = append(flat, list[i])
		}
		for _, l := range list[i].Legs {
			if stateOf(l.Status) == node.VenueOpen {
				flat = append(flat, l)
			}
		}
	}
	list = flat
	out := make([]node.VenueOrder, 0, len(list))
	for i := range list {
		o := &list[i]
		if _, known := a.priorOf(o.ID); replacementRE.MatchString(o.ClientOrderID) && !known {
			// A replacement this process did not make, or whose answer was
			// lost: alone it tells only its own part of the order's life,
			// so its incarnations are followed from the first for the whole.
			// An order with no first under that name (not the node's) is
			// listed as it is.
			vo, err := a.Lookup(ctx, node.VenueOrder{ClientOrderID: NodeID(o.ClientOrderID)})
			if err == nil {
				out = append(out, vo)
				continue
			}
			if !errors.Is(err, node.ErrVenueNotFound) {
				return nil, err
			}
		}
		out = append(out, a.cumulative(o))
	}
	return out, nil
}

// Secrets names the key values the adapter holds, for the node to scrub
// from what it logs, returns and journals (a venue's error text may echo
// them). They are never part of anything the adapter returns.
func (a *Adapter) Secrets() []string { return []string{a.keyID, a.secret} }
