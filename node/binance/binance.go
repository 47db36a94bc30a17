// Package binance is the node's adapter for a Binance spot account
// (environment testnet, the default, or live), through
// github.com/adshao/go-binance/v2 for REST and the venue's WebSocket API
// (a signed userDataStream.subscribe.signature subscription) for order
// updates.
//
// It maps the node's vocabulary to Binance's: market/limit × GTC/IOC;
// stop_limit as STOP_LOSS_LIMIT, a trailing stop by percent as STOP_LOSS
// with trailingDelta, an oco as one orderList/oco (a plain stop, and a
// trailing stop trailingDelta cannot carry, it leaves to the node: Holds
// says so); modify as cancel-replace (STOP_ON_FAILURE), instruments from
// exchangeInfo filters (PRICE_FILTER tick, LOT_SIZE step and minimum,
// NOTIONAL / MIN_NOTIONAL), the account's balances as cash (the quote
// asset) and positions (the base assets, each at the average price of
// the account's trades that make it up), each fill's commission as its
// fee in the quote asset (fees.go). The node's client order id
// travels as Binance's newClientOrderId, mapped reversibly to fit its
// 36-character rule (ClientID, NodeID). Symbols travel in Binance's own
// spelling (BTCUSDT) from the venue's symbol table (internal/instrument,
// with [symbols.binance]) and come back as the venue's symbols list
// writes them (BTC-USD or BTCUSDT).
//
// It never resends a write: a submit, cancel or replace whose answer is
// lost is reported as node.ErrVenueUnknown. Reads and lookups retry a
// bounded number of times; 429/418 answers close a gate until Retry-After.
// It never logs, returns or wraps a key (Secrets names them to the node,
// only so that it can scrub them), and never rounds a quantity or price
// (the node checks them against the instruments first).
package binance

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	bn "github.com/adshao/go-binance/v2"
	"github.com/adshao/go-binance/v2/common"
	"github.com/shopspring/decimal"

	"wicket/internal/instrument"
	"wicket/internal/project"
	"wicket/node"
	"wicket/node/guardrail"
	"wicket/node/venuecall"
	"wicket/node/venuefee"
)

// Endpoints of the environments (Binance spot API documentation, "General
// API Information" and the spot testnet's page).
const (
	LiveREST     = "https://api.binance.com"
	TestnetREST  = "https://testnet.binance.vision"
	LiveWSAPI    = "wss://ws-api.binance.com:443/ws-api/v3"
	TestnetWSAPI = "wss://ws-api.testnet.binance.vision/ws-api/v3"
)

// wsAPIPath is the WebSocket API's path under a base_url's host.
const wsAPIPath = "/ws-api/v3"

// Config configures an Adapter.
type Config struct {
	Venue     project.Venue // kind binance; Environment and BaseURL are read
	APIKey    string
	APISecret string
	Timeout   time.Duration    // per HTTP request (default 10s)
	Now       func() time.Time // default time.Now
	Transport http.RoundTripper
}

// Adapter is one Binance spot account.
type Adapter struct {
	name, env         string
	c                 *bn.Client
	tr                *venuecall.Transport
	wsAPI             string // the WebSocket API's endpoint
	apiKey, apiSecret string // sign the stream's subscription
	now               func() time.Time
	syms              instrument.Listing // the venue's list: the node's symbols → Binance's (BTC-USD → BTCUSDT) and back

	mu      sync.Mutex
	symbols map[string]*bn.Symbol // from exchangeInfo, by Binance's symbol
	quote   string                // the account currency: the first symbol's quote asset
	prior   map[int64]fills       // order id of a replacement → the fills of the incarnations before it
	costs   map[string]cost       // Binance's symbol → its holding's average price, for the quantity held then
	fees    venuefee.Ledger       // order id of an incarnation → its trades' commissions (fees.go)
}

// New makes an adapter. It reaches nothing until called.
func New(cfg Config) (*Adapter, error) {
	if cfg.APIKey == "" || cfg.APISecret == "" {
		return nil, fmt.Errorf("venue %s: binance keys missing: set %s and %s in the environment or settings/secrets.env",
			cfg.Venue.Name, project.KeyBinanceAPIKey, project.KeyBinanceAPISecret)
	}
	set, err := venuecall.NewSetup(cfg.Venue, venuecall.Endpoints{REST: TestnetREST, Stream: TestnetWSAPI}, venuecall.Endpoints{REST: LiveREST, Stream: LiveWSAPI},
		wsAPIPath, cfg.Transport, cfg.Timeout, cfg.Now)
	if err != nil {
		return nil, err
	}
	c := bn.NewClient(cfg.APIKey, cfg.APISecret)
	c.BaseURL = set.REST
	c.HTTPClient = set.HTTP
	c.Logger.SetOutput(io.Discard) // the library's debug log could carry a signed URL
	c.Debug = false
	// Binance's table with wicket.toml's overrides, whatever kind the venue
	// names (a test's may name none).
	syms, err := instrument.For(instrument.Binance, cfg.Venue.SymbolOverrides)
	if err != nil {
		return nil, fmt.Errorf("venue %s: %w", cfg.Venue.Name, err)
	}
	a := &Adapter{name: cfg.Venue.Name, env: cfg.Venue.Environment, c: c, tr: set.Transport, wsAPI: set.Stream, apiKey: cfg.APIKey, apiSecret: cfg.APISecret,
		now: set.Now, syms: syms.Listing(cfg.Venue.Symbols), symbols: map[string]*bn.Symbol{}, costs: map[string]cost{}}
	return a, nil
}

// Kind is "binance".
func (a *Adapter) Kind() string { return project.KindBinance }

// Environment is testnet or live.
func (a *Adapter) Environment() string { return a.env }

// MarkSource says where marks come from.
func (a *Adapter) MarkSource() string {
	return "binance " + a.env + ": last trade price (GET /api/v3/ticker/price)"
}

// --- errors ---

// classify turns a library error into the node's kinds: an answer that
// refuses is rejected, a lost or 5xx answer unknown, a rate limit a refusal
// (Binance did not process it).
func (a *Adapter) classify(err error) error {
	if err == nil {
		return nil
	}
	var api *common.APIError
	if errors.As(err, &api) {
		switch api.Code {
		case -2013, -2011: // "Order does not exist." / "Unknown order sent."
			return &node.VenueError{Kind: node.ErrVenueNotFound, Venue: a.name, Message: api.Message}
		case -1007, -1006: // "Timeout waiting for response from backend server. Send status unknown." / unexpected response
			return &node.VenueError{Kind: node.ErrVenueUnknown, Venue: a.name, Message: api.Message}
		}
		return &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name, Message: fmt.Sprintf("code %d: %s", api.Code, api.Message)}
	}
	return venuecall.Classify(a.name, err)
}

// --- reads ---

// Instruments reads exchangeInfo for the symbols.
func (a *Adapter) Instruments(ctx context.Context, symbols []string) (map[string]guardrail.Instrument, error) {
	vsyms := a.syms.Venues(symbols)
	info, err := venuecall.Read(ctx, a.tr, func() (*bn.ExchangeInfo, error) {
		return a.c.NewExchangeInfoService().Symbols(vsyms...).Do(ctx)
	})
	if isInvalidSymbol(err) {
		return nil, a.unknownSymbols(ctx, symbols)
	}
	if err != nil {
		return nil, a.classify(err)
	}
	for _, s := range vsyms {
		if !slices.ContainsFunc(info.Symbols, func(x bn.Symbol) bool { return x.Symbol == s }) {
			return nil, a.unknownSymbols(ctx, symbols)
		}
	}
	out := map[string]guardrail.Instrument{}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := range info.Symbols {
		s := &info.Symbols[i]
		a.symbols[s.Symbol] = s
		in := guardrail.Instrument{Fractional: true}
		if f := s.PriceFilter(); f != nil {
			in.Tick = dec(f.TickSize)
		}
		if f := s.LotSizeFilter(); f != nil {
			in.Step, in.MinQuantity = dec(f.StepSize), dec(f.MinQuantity)
			in.Fractional = in.Step.IsZero() || in.Step.LessThan(decimal.NewFromInt(1))
		}
		if f := s.NotionalFilter(); f != nil {
			in.MinNotional = dec(f.MinNotional)
		} else {
			in.MinNotional = minNotional(s.Filters) // the older MIN_NOTIONAL filter
		}
		out[a.syms.Listed(s.Symbol)] = in
	}
	if a.quote == "" && len(vsyms) > 0 {
		a.quote = a.symbols[vsyms[0]].QuoteAsset
	}
	return out, nil
}

// isInvalidSymbol reports Binance's answer that a symbol is not listed
// (-1121 "Invalid symbol.").
func isInvalidSymbol(err error) bool {
	var api *common.APIError
	return errors.As(err, &api) && api.Code == -1121
}

// unknownSymbols finds which of symbols Binance does not list, one
// exchangeInfo read each, naming each in Binance's own spelling (BTCUSDT,
// with the list's BTC-USD after it), and for each the symbol Binance lists
// for the same pair when there is one (BTCUSDC, BTCFDUSD), so the error
// says what to write in wicket.toml. A read that fails otherwise is
// returned as it is (the venue may be unreachable, not misconfigured).
func (a *Adapter) unknownSymbols(ctx context.Context, symbols []string) error {
	listed := func(s string) (bool, error) {
		_, err := venuecall.Read(ctx, a.tr, func() (*bn.ExchangeInfo, error) { return a.c.NewExchangeInfoService().Symbol(s).Do(ctx) })
		if isInvalidSymbol(err) {
			return false, nil
		}
		return err == nil, a.classify(err)
	}
	var missing []string
	for _, s := range symbols {
		vs := a.syms.Venue(s)
		ok, err := listed(vs)
		if err != nil {
			return err
		}
		if ok {
			continue
		}
		what := a.syms.Named(s)
		for _, c := range SymbolCandidates(s) {
			if c == vs {
				continue
			}
			found, err := listed(c)
			if err != nil {
				return err
			}
			if found {
				canon, err := a.syms.Map().Canonical(c)
				if err != nil {
					canon = c
				}
				what += fmt.Sprintf(" (binance lists %s: write %s)", c, canon)
				break
			}
		}
		missing = append(missing, what)
	}
	if len(missing) == 0 { // listed one by one, though not together: say so
		missing = append(missing, "one of "+strings.Join(a.syms.Venues(symbols), ", "))
	}
	return &node.VenueError{Kind: node.ErrUnknownSymbol, Venue: a.name, Message: fmt.Sprintf(
		"binance does not list %s: list symbols binance trades in the symbols of venue %s in wicket.toml, in wicket's spelling (BTC-USD) or binance's (BTCUSDT), or map one in [symbols.binance]",
		strings.Join(missing, ", "), a.name)}
}

// SymbolCandidates are Binance's likely spellings of a pair written
// another way: separators dropped and upper case, and for a USD quote the
// stablecoins Binance quotes instead (spot's and USDⓈ-M futures' alike).
func SymbolCandidates(s string) []string {
	parts := strings.FieldsFunc(strings.ToUpper(s), func(r rune) bool { return r == '-' || r == '/' || r == '_' || r == ' ' })
	var out []string
	if j := strings.Join(parts, ""); j != s && j != "" {
		out = append(out, j)
	}
	if len(parts) == 2 && parts[1] == "USD" {
		for _, q := range []string{"USDT", "USDC", "FDUSD"} {
			out = append(out, parts[0]+q)
		}
	}
	return out
}

// Account reads balances: cash is the free quote asset, positions the base
// assets of the configured symbols (spot holds no shorts).
func (a *Adapter) Account(ctx context.Context) (node.Account, error) {
	a.mu.Lock()
	known := a.quote != ""
	a.mu.Unlock()
	if !known {
		return node.Account{}, fmt.Errorf("%s: the account is read after the instruments (which name its assets)", a.name)
	}
	acct, err := venuecall.Read(ctx, a.tr, func() (*bn.Account, error) { return a.c.NewGetAccountService().Do(ctx) })
	if err != nil {
		return node.Account{}, a.classify(err)
	}
	a.mu.Lock()
	out := node.Account{ID: acct.AccountType, Currency: a.quote}
	if acct.UID != 0 {
		out.ID = fmt.Sprintf("uid %d (%s)", acct.UID, acct.AccountType)
	}
	held := map[string]decimal.Decimal{}
	for _, b := range acct.Balances {
		held[b.Asset] = dec(b.Free).Add(dec(b.Locked))
		if b.Asset == a.quote {
			out.Cash = dec(b.Free)
		}
	}
	out.BuyingPower = out.Cash
	for sym, s := range a.symbols {
		if q := held[s.BaseAsset]; !q.IsZero() {
			out.Positions = append(out.Positions, node.VenuePosition{Symbol: sym, Quantity: q})
		}
	}
	a.mu.Unlock()
	for i, p := range out.Positions {
		out.Positions[i].AveragePrice = a.averagePrice(ctx, p.Symbol, p.Quantity)
		out.Positions[i].Symbol = a.syms.Listed(p.Symbol)
	}
	return out, nil
}

// cost is a holding's average price, computed from the trades for the
// quantity held then.
type cost struct{ qty, avg decimal.Decimal }

// maxTrades is how many of a symbol's latest trades the average is
// computed from (GET /api/v3/myTrades allows 1000 at most).
const maxTrades = 1000

// averagePrice is the average entry price of the quantity held of symbol
// (Binance's spelling),
// from the account's trades (Binance spot keeps no position price): each
// buy adds its quantity, less a commission charged in the base asset, at
// its price; each sell takes its quantity out at the average. It is read
// again only when the holding changes. When the trades do not account for
// the whole holding (a deposit, or trades older than the latest 1000) it
// is zero, unknown, rather than a wrong figure; so is a failed read.
func (a *Adapter) averagePrice(ctx context.Context, symbol string, held decimal.Decimal) decimal.Decimal {
	a.mu.Lock()
	c, ok := a.costs[symbol]
	base := ""
	if s := a.symbols[symbol]; s != nil {
		base = s.BaseAsset
	}
	a.mu.Unlock()
	if ok && c.qty.Equal(held) {
		return c.avg
	}
	trades, err := venuecall.Read(ctx, a.tr, func() ([]*bn.TradeV3, error) {
		return a.c.NewListTradesService().Symbol(symbol).Limit(maxTrades).Do(ctx)
	})
	if err != nil {
		return decimal.Zero
	}
	slices.SortFunc(trades, func(x, y *bn.TradeV3) int { return cmp.Compare(x.ID, y.ID) })
	qty, spent := decimal.Zero, decimal.Zero
	for _, t := range trades {
		q, px := dec(t.Quantity), dec(t.Price)
		if t.IsBuyer {
			spent = spent.Add(q.Mul(px))
			if t.CommissionAsset == base {
				q = q.Sub(dec(t.Commission))
			}
			qty = qty.Add(q)
			continue
		}
		if !qty.IsPositive() {
			continue
		}
		q = decimal.Min(q, qty)
		spent = spent.Sub(spent.Mul(q).Div(qty))
		qty = qty.Sub(q)
	}
	avg := decimal.Zero
	if qty.Equal(held) && qty.IsPositive() {
		avg = spent.DivRound(qty, 10)
	}
	a.mu.Lock()
	a.costs[symbol] = cost{held, avg}
	a.mu.Unlock()
	return avg
}

// Marks reads the last trade prices.
func (a *Adapter) Marks(ctx context.Context, symbols []string) (map[string]decimal.Decimal, error) {
	vsyms := a.syms.Venues(symbols)
	prices, err := venuecall.Read(ctx, a.tr, func() ([]*bn.SymbolPrice, error) {
		return a.c.NewListPricesService().Symbols(vsyms).Do(ctx)
	})
	if err != nil {
		return nil, a.classify(err)
	}
	out := map[string]decimal.Decimal{}
	for _, p := range prices {
		if d := dec(p.Price); d.IsPositive() {
			out[a.syms.Listed(p.Symbol)] = d
		}
	}
	return out, nil
}

// Lookup reads one order by its Binance id, else by client order id. An
// order that cancel-replace replaced is followed to its newest
// incarnation (the node's client id with .1, .2, ..., a caller's own with :1, :2, ...), and its fills are
// summed over all of them.
func (a *Adapter) Lookup(ctx context.Context, o node.VenueOrder) (node.VenueOrder, error) {
	cid, err := ClientID(o.ClientOrderID)
	if err != nil {
		return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueNotFound, Venue: a.name, Message: err.Error()}
	}
	got, err := a.get(ctx, o.Symbol, o.VenueOrderID, cid)
	if err != nil {
		return node.VenueOrder{}, err
	}
	_, isRepl := replacementOf(got.ClientOrderID)
	if venueLegRE.MatchString(cid) || (stateOf(got.Status) != node.VenueCanceled && !(isRepl && !a.knows(got.OrderID))) {
		if err := a.coverFees(ctx, got.Symbol, got.OrderID, dec(got.ExecutedQuantity)); err != nil {
			return node.VenueOrder{}, err
		}
		return a.cumulative(fromOrder(got), got.OrderID), nil
	}
	// Walk the incarnations from the first, recording what came before each.
	var last *bn.Order
	var before fills
	for n := 0; n <= 35; n++ {
		id := cid
		if n > 0 {
			if id, err = replacementID(cid, n); err != nil {
				break
			}
		}
		ord, err := a.get(ctx, o.Symbol, "", id)
		if errors.Is(err, node.ErrVenueNotFound) {
			break
		}
		if err != nil {
			return node.VenueOrder{}, err
		}
		if err := a.coverFees(ctx, ord.Symbol, ord.OrderID, dec(ord.ExecutedQuantity)); err != nil {
			return node.VenueOrder{}, err
		}
		if last != nil {
			before = before.add(a.own(last))
		}
		a.setPrior(ord.OrderID, before)
		last = ord
	}
	if last == nil {
		last = got
	}
	return a.cumulative(fromOrder(last), last.OrderID), nil
}

// get reads one incarnation by order id (when known) or venue client id.
func (a *Adapter) get(ctx context.Context, symbol, orderID, venueCID string) (*bn.Order, error) {
	got, err := venuecall.Read(ctx, a.tr, func() (*bn.Order, error) {
		s := a.c.NewGetOrderService().Symbol(a.syms.Venue(symbol))
		if id, perr := strconv.ParseInt(orderID, 10, 64); perr == nil {
			s = s.OrderID(id)
		} else {
			s = s.OrigClientOrderID(venueCID)
		}
		return s.Do(ctx)
	})
	return got, a.classify(err)
}

// fills is a filled quantity, its quote amount and its commissions in
// the account currency, and in another asset (fees.go).
type fills struct {
	qty, quote, fee decimal.Decimal
	asset           string
	other           decimal.Decimal
}

func (f fills) add(g fills) fills {
	return fills{f.qty.Add(g.qty), f.quote.Add(g.quote), f.fee.Add(g.fee), cmp.Or(g.asset, f.asset), f.other.Add(g.other)}
}

// own is one incarnation's fills, with the commissions booked for it.
func (a *Adapter) own(o *bn.Order) fills {
	asset, other := a.otherFeeOf(o.OrderID)
	return fills{dec(o.ExecutedQuantity), dec(o.CummulativeQuoteQuantity), a.feeOf(o.OrderID), asset, other}
}

func (a *Adapter) knows(orderID int64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.prior[orderID]
	return ok
}

func (a *Adapter) setPrior(orderID int64, f fills) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.prior == nil {
		a.prior = map[int64]fills{}
	}
	a.prior[orderID] = f
}

// cumulative adds the fills of the incarnations before orderID to vo, so
// it tells the order's whole life: quantity, filled, average price and
// the commissions booked (fees.go) in the account currency; and names
// its symbol as the venue's symbols list does. Every order the adapter
// returns passes here.
func (a *Adapter) cumulative(vo node.VenueOrder, orderID int64) node.VenueOrder {
	vo.Symbol = a.syms.Listed(vo.Symbol)
	vo.Fee = a.feeOf(orderID)
	vo.FeeAsset, vo.AssetFee = a.otherFeeOf(orderID)
	a.mu.Lock()
	p, ok := a.prior[orderID]
	a.mu.Unlock()
	if ok {
		vo.Fee, vo.FeeAsset, vo.AssetFee = vo.Fee.Add(p.fee), cmp.Or(vo.FeeAsset, p.asset), vo.AssetFee.Add(p.other)
	}
	if !ok || p.qty.IsZero() {
		return vo
	}
	quote := vo.Notional.Add(p.quote)
	vo.Quantity, vo.Filled, vo.Notional = vo.Quantity.Add(p.qty), vo.Filled.Add(p.qty), quote
	if vo.Filled.IsPositive() {
		vo.AveragePrice = quote.DivRound(vo.Filled, 10)
	}
	return vo
}

// OpenOrders lists the open orders of the symbols.
func (a *Adapter) OpenOrders(ctx context.Context, symbols []string) ([]node.VenueOrder, error) {
	var out []node.VenueOrder
	for _, sym := range a.syms.Venues(symbols) {
		list, err := venuecall.Read(ctx, a.tr, func() ([]*bn.Order, error) { return a.c.NewListOpenOrdersService().Symbol(sym).Do(ctx) })
		if err != nil {
			return nil, a.classify(err)
		}
		for _, o := range list {
			if err := a.coverFees(ctx, o.Symbol, o.OrderID, dec(o.ExecutedQuantity)); err != nil {
				return nil, err
			}
			if _, repl := replacementOf(o.ClientOrderID); repl && !a.knows(o.OrderID) {
				// A replacement this process did not make, or whose answer
				// was lost: alone it tells only its own part of the order's
				// life, so its incarnations are walked for the whole. One
				// with no first under that name is listed as it is.
				vo, err := a.Lookup(ctx, node.VenueOrder{Symbol: o.Symbol, ClientOrderID: NodeID(o.ClientOrderID)})
				if err == nil {
					out = append(out, vo)
					continue
				}
				if !errors.Is(err, node.ErrVenueNotFound) {
					return nil, err
				}
			}
			out = append(out, a.cumulative(fromOrder(o), o.OrderID))
		}
	}
	return out, nil
}

// Secrets names the key values the adapter holds, for the node to scrub
// from what it logs, returns and journals (a venue's error text may echo
// them). They are never part of anything the adapter returns.
func (a *Adapter) Secrets() []string { return []string{a.apiKey, a.apiSecret} }
