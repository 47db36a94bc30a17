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
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
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
	"wicket/node/command"
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
	rest, ws := TestnetREST, TestnetWSAPI
	if cfg.Venue.Environment == project.EnvLive {
		rest, ws = LiveREST, LiveWSAPI
	}
	if cfg.Venue.BaseURL != "" {
		u, err := url.Parse(cfg.Venue.BaseURL)
		if err != nil {
			return nil, fmt.Errorf("venue %s: base_url: %w", cfg.Venue.Name, err)
		}
		rest = strings.TrimSuffix(cfg.Venue.BaseURL, "/")
		scheme := "ws"
		if u.Scheme == "https" {
			scheme = "wss"
		}
		ws = scheme + "://" + u.Host + strings.TrimSuffix(u.Path, "/") + wsAPIPath
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	tr := &venuecall.Transport{Base: cfg.Transport, Now: cfg.Now}
	c := bn.NewClient(cfg.APIKey, cfg.APISecret)
	c.BaseURL = rest
	c.HTTPClient = &http.Client{Transport: tr, Timeout: cfg.Timeout}
	c.Logger.SetOutput(discard{}) // the library's debug log could carry a signed URL
	c.Debug = false
	// Binance's table with wicket.toml's overrides, whatever kind the venue
	// names (a test's may name none).
	syms, err := instrument.For(instrument.Binance, cfg.Venue.SymbolOverrides)
	if err != nil {
		return nil, fmt.Errorf("venue %s: %w", cfg.Venue.Name, err)
	}
	a := &Adapter{name: cfg.Venue.Name, env: cfg.Venue.Environment, c: c, tr: tr, wsAPI: ws, apiKey: cfg.APIKey, apiSecret: cfg.APISecret,
		now: cfg.Now, syms: syms.Listing(cfg.Venue.Symbols), symbols: map[string]*bn.Symbol{}, costs: map[string]cost{}}
	return a, nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// Kind is "binance".
func (a *Adapter) Kind() string { return project.KindBinance }

// Environment is testnet or live.
func (a *Adapter) Environment() string { return a.env }

// MarkSource says where marks come from.
func (a *Adapter) MarkSource() string {
	return "binance " + a.env + ": last trade price (GET /api/v3/ticker/price)"
}

// --- client order ids ---

// Binance's newClientOrderId: at most 36 characters of [.A-Z:/a-z0-9_-].
var venueIDRE = regexp.MustCompile(`^[.A-Z:/a-z0-9_-]{1,36}$`)

// wk-<uuid> (the node's mint) ↔ wk<32 hex>; a replacement appends .<n>;
// a linked leg's or a fired trigger's suffix (node.StopLegSuffix,
// node.TakeProfitLegSuffix, node.FireSuffix) travels as -s, -t or -f, and
// a split flip's two orders (node.FlipCloseSuffix, node.FlipOpenSuffix)
// as -c and -o.
var (
	nodeMintRE  = regexp.MustCompile(`^wk-([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})(-stop|-tp|-fire|-close|-open)?$`)
	venueMintRE = regexp.MustCompile(`^wk([0-9a-f]{32})(\.[0-9a-z])?$`)
	venueLegRE  = regexp.MustCompile(`^wk([0-9a-f]{32})-([stf])$`)
	// A caller's own id (not minted) is replaced as <id>:<n>, so its
	// base keeps at most 34 characters; an id of that form is reserved.
	callerReplRE = regexp.MustCompile(`^(.{1,34}):([1-9a-z])$`)
	venueFlipRE  = regexp.MustCompile(`^wk([0-9a-f]{32})-([co])$`)
	legSuffixes  = map[string]string{node.StopLegSuffix: "-s", node.TakeProfitLegSuffix: "-t", node.FireSuffix: "-f", "-s": node.StopLegSuffix, "-t": node.TakeProfitLegSuffix, "-f": node.FireSuffix,
		node.FlipCloseSuffix: "-c", node.FlipOpenSuffix: "-o", "-c": node.FlipCloseSuffix, "-o": node.FlipOpenSuffix}
)

// ClientID is the node's client order id as Binance carries it: wk-<uuid>
// becomes wk<32 hex>; any other id that fits Binance's rule travels as it
// is. It is an error for an id that cannot travel (or that would read back
// as a minted one).
func ClientID(nodeID string) (string, error) {
	if m := nodeMintRE.FindStringSubmatch(nodeID); m != nil {
		return "wk" + strings.Join(m[1:6], "") + legSuffixes[m[6]], nil
	}
	if venueMintRE.MatchString(nodeID) || venueLegRE.MatchString(nodeID) || venueFlipRE.MatchString(nodeID) || callerReplRE.MatchString(nodeID) || !venueIDRE.MatchString(nodeID) {
		return "", fmt.Errorf("client_order_id %q cannot travel to binance (at most 36 characters of [.A-Z:/a-z0-9_-], not of the form wk<32 hex>, not ending in :<digit or letter>, which a replacement appends); let the node mint one", nodeID)
	}
	return nodeID, nil
}

// NodeID reverses ClientID (and strips a replacement's suffix).
func NodeID(venueID string) string {
	if m := venueLegRE.FindStringSubmatch(venueID); m != nil {
		return NodeID("wk"+m[1]) + legSuffixes["-"+m[2]]
	}
	if m := venueFlipRE.FindStringSubmatch(venueID); m != nil {
		return NodeID("wk"+m[1]) + legSuffixes["-"+m[2]]
	}
	if m := venueMintRE.FindStringSubmatch(venueID); m != nil {
		h := m[1]
		return "wk-" + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
	}
	if m := callerReplRE.FindStringSubmatch(venueID); m != nil {
		return m[1]
	}
	return venueID
}

// replacementID is the id of the n-th replacement of an order (n ≥ 1): a
// minted id's is wk<32 hex>.<n>, a caller's own <id>:<n>.
func replacementID(venueID string, n int) (string, error) {
	if venueLegRE.MatchString(venueID) {
		return "", fmt.Errorf("order %s is a leg of an order list, which binance cannot replace alone (it would cancel the list); cancel the oco and submit a new one", venueID)
	}
	if n > 35 {
		return "", fmt.Errorf("order %s cannot be modified again at binance (35 replacements at most); cancel it and submit a new one", venueID)
	}
	if m := venueMintRE.FindStringSubmatch(venueID); m != nil {
		return "wk" + m[1] + "." + strconv.FormatInt(int64(n), 36), nil
	}
	base := NodeID(venueID)
	if len(base) > 34 {
		return "", fmt.Errorf("order %s cannot be modified at binance: its client order id has %d characters and a replacement needs two more than 34 (binance takes 36); cancel it and submit a new one", venueID, len(base))
	}
	return base + ":" + strconv.FormatInt(int64(n), 36), nil
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
	var rl *venuecall.RateLimited
	if errors.As(err, &rl) {
		return &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name, Message: rl.Error() + "; nothing was sent"}
	}
	if venuecall.Unknown(err) {
		return &node.VenueError{Kind: node.ErrVenueUnknown, Venue: a.name, Message: venuecall.Message(err)}
	}
	return fmt.Errorf("%s: %s", a.name, venuecall.Message(err))
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

// replacementOf reports a venue client id's replacement number.
func replacementOf(venueID string) (int, bool) {
	var suffix string
	if m := venueMintRE.FindStringSubmatch(venueID); m != nil && m[2] != "" {
		suffix = m[2][1:]
	} else if m := callerReplRE.FindStringSubmatch(venueID); m != nil && !venueMintRE.MatchString(venueID) {
		suffix = m[2]
	}
	if suffix == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(suffix, 36, 64)
	return int(n), err == nil && n > 0
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

// --- writes: each sent once ---

// Submit places an order (newOrderRespType FULL, so fills come back):
// market, limit, a stop_limit as STOP_LOSS_LIMIT (stopPrice, price), a
// trailing stop by percent as STOP_LOSS with trailingDelta (in basis
// points, active from placement). A plain stop is held by the node
// (Holds), never sent.
func (a *Adapter) Submit(ctx context.Context, r node.OrderRequest) (node.VenueOrder, error) {
	r.Symbol = a.syms.Venue(r.Symbol) // BTC-USD travels as BTCUSDT; the answer is named back in cumulative

	cid, err := ClientID(r.ClientOrderID)
	if err != nil {
		return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name, Message: err.Error()}
	}
	s := a.c.NewCreateOrderService().Symbol(r.Symbol).Side(side(r.Side)).Quantity(r.Quantity.String()).
		NewClientOrderID(cid).NewOrderRespType(bn.NewOrderRespTypeFULL).
		SelfTradePreventionMode(bn.SelfTradePreventionMode(guardrail.SelfTradeMode)) // the node's self-trade check leaves it to the venue
	switch r.Type {
	case command.Limit:
		s = s.Type(bn.OrderTypeLimit).Price(r.Price.String()).TimeInForce(tif(r.TimeInForce))
	case command.Market:
		s = s.Type(bn.OrderTypeMarket)
	case command.StopLimit:
		s = s.Type(bn.OrderTypeStopLossLimit).StopPrice(r.StopPrice.String()).Price(r.Price.String()).TimeInForce(bn.TimeInForceTypeGTC)
	case command.TrailingStop:
		bips, ok := a.trailingDelta(r.Symbol, r.TrailPercent)
		if !ok {
			return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name, Message: a.trailingHint(r.Symbol) + "; nothing was sent"}
		}
		s = s.Type(bn.OrderTypeStopLoss).TrailingDelta(strconv.FormatInt(bips, 10))
	default:
		return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name,
			Message: fmt.Sprintf("binance spot takes no %s order from the node (the node holds it); nothing was sent", r.Type)}
	}
	res, err := s.Do(ctx)
	if err != nil {
		return node.VenueOrder{}, a.classify(err)
	}
	a.bookFills(res) // the FULL answer's fills carry each trade's commission
	return a.cumulative(fromCreate(res), res.OrderID), nil
}

// Binance's trailingDelta bounds without a TRAILING_DELTA filter (spot
// API "Trailing Stop FAQ": 10 to 2000 basis points).
const minTrailingBips, maxTrailingBips = 10, 2000

// trailingDelta is a trailing percent in Binance's basis points, when it
// is a whole number of them within the symbol's bounds.
func (a *Adapter) trailingDelta(symbol string, percent decimal.Decimal) (int64, bool) {
	bips := percent.Shift(2)
	lo, hi := a.trailingBounds(symbol)
	if !percent.IsPositive() || !bips.IsInteger() || bips.IntPart() < lo || bips.IntPart() > hi {
		return 0, false
	}
	return bips.IntPart(), true
}

func (a *Adapter) trailingBounds(symbol string) (lo, hi int64) {
	lo, hi = minTrailingBips, maxTrailingBips
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.symbols[a.syms.Venue(symbol)]; s != nil {
		if f := s.TrailingDeltaFilter(); f != nil && f.MinTrailingBelowDelta > 0 {
			lo, hi = int64(max(f.MinTrailingBelowDelta, f.MinTrailingAboveDelta)), int64(min(f.MaxTrailingBelowDelta, f.MaxTrailingAboveDelta))
		}
	}
	return lo, hi
}

func (a *Adapter) trailingHint(symbol string) string {
	lo, hi := a.trailingBounds(symbol)
	return fmt.Sprintf("binance holds a trailing stop by trailingDelta, a percent of the best price in steps of 0.01 from %s to %s on %s: give trail_percent in that range (trail_amount is not a binance form)",
		decimal.New(lo, -2), decimal.New(hi, -2), symbol)
}

// Holds says what Binance spot holds natively: market, limit, stop_limit
// (STOP_LOSS_LIMIT), a trailing stop by a percent trailingDelta carries,
// and an oco (orderList/oco). A plain stop (stop-market), and a trailing
// stop by amount or by a percent trailingDelta cannot carry, are held by
// the node, which trails it on the marks and fires a market order when
// the mark trades through it. A bracket's entry (market or limit) is
// Binance's own; its exits are held by Binance too, but only as an
// orderList/oco placed once the entry has filled (HoldAfterEntry): the
// node sends that list then, for what filled.
func (a *Adapter) Holds(g node.GroupRequest) ([]node.Hold, error) {
	if g.Class == node.GroupBracket {
		return a.bracketHolds(g)
	}
	out := make([]node.Hold, len(g.Legs))
	for i, l := range g.Legs {
		out[i] = node.HoldVenue
		switch l.Type {
		case command.Stop:
			if g.Class != "" {
				break
			}
			out[i] = node.HoldNode
			if _, err := ClientID(l.ClientOrderID + node.FireSuffix); l.ClientOrderID != "" && err != nil {
				return nil, fmt.Errorf("the node holds this stop and fires it under client order id %s, which cannot travel to binance (%v): give a shorter client_order_id or let the node mint one", l.ClientOrderID+node.FireSuffix, err)
			}
		case command.TrailingStop:
			if _, ok := a.trailingDelta(l.Symbol, l.TrailPercent); ok && g.Class == "" {
				break
			}
			if g.Class != "" {
				return nil, errors.New(a.trailingHint(l.Symbol))
			}
			out[i] = node.HoldNode // trailingDelta cannot carry it: the node trails it
			if _, err := ClientID(l.ClientOrderID + node.FireSuffix); l.ClientOrderID != "" && err != nil {
				return nil, fmt.Errorf("the node holds this trailing stop and fires it under client order id %s, which cannot travel to binance (%v): give a shorter client_order_id or let the node mint one", l.ClientOrderID+node.FireSuffix, err)
			}
		}
	}
	return out, nil
}

// bracketHolds is Holds for a bracket: the entry now, its take-profit
// limit and stop-loss (a stop or stop_limit) as one orderList/oco once the
// entry fills, each leg under a client order id Binance carries.
func (a *Adapter) bracketHolds(g node.GroupRequest) ([]node.Hold, error) {
	if len(g.Legs) != 3 {
		return nil, fmt.Errorf("a bracket is an entry and two exits, not %d legs", len(g.Legs))
	}
	entry, tp, sl := g.Legs[0], g.Legs[1], g.Legs[2]
	switch {
	case entry.Type != command.Market && entry.Type != command.Limit:
		return nil, fmt.Errorf("binance spot takes a bracket's entry as a market or limit order, not %s", entry.Type)
	case tp.Type != command.Limit || (sl.Type != command.Stop && sl.Type != command.StopLimit):
		return nil, errors.New("binance spot places a bracket's exits as one orderList/oco: a take-profit limit (LIMIT_MAKER) and a stop-loss stop_price, optionally with limit_price (STOP_LOSS or STOP_LOSS_LIMIT)")
	}
	for _, l := range g.Legs {
		if _, err := ClientID(l.ClientOrderID); l.ClientOrderID != "" && err != nil {
			return nil, fmt.Errorf("bracket leg %s: %w", l.ClientOrderID, err)
		}
	}
	return []node.Hold{node.HoldVenue, node.HoldAfterEntry, node.HoldAfterEntry}, nil
}

// SubmitGroup places an oco as one orderList (POST /api/v3/orderList/oco,
// spot API "New Order list - OCO"): the limit leg is a LIMIT_MAKER, the
// stop leg a STOP_LOSS_LIMIT (with its limit) or STOP_LOSS; for a sell the
// limit is the above leg, for a buy the below one. Each leg travels under
// its own client order id (ClientID), the list under the group's. The
// answer lists the legs in the request's order.
func (a *Adapter) SubmitGroup(ctx context.Context, g node.GroupRequest) ([]node.VenueOrder, error) {
	if g.Class != node.GroupOCO || len(g.Legs) != 2 {
		return nil, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name, Message: fmt.Sprintf("binance spot takes an oco as one order list, not a %q group of %d legs; nothing was sent", g.Class, len(g.Legs))}
	}
	lim, stop := g.Legs[0], g.Legs[1]
	limID, err := ClientID(lim.ClientOrderID)
	if err != nil {
		return nil, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name, Message: err.Error()}
	}
	stopID, err := ClientID(stop.ClientOrderID)
	if err != nil {
		return nil, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name, Message: err.Error()}
	}
	limitLeg, stopLeg := "above", "below"
	if lim.Side == command.Buy {
		limitLeg, stopLeg = "below", "above"
	}
	p := url.Values{}
	p.Set("symbol", a.syms.Venue(lim.Symbol))
	p.Set("side", string(side(lim.Side)))
	p.Set("quantity", lim.Quantity.String())
	p.Set("listClientOrderId", limID)
	p.Set("newOrderRespType", "FULL")
	p.Set(limitLeg+"Type", string(bn.OrderTypeLimitMaker))
	p.Set(limitLeg+"Price", lim.Price.String())
	p.Set(limitLeg+"ClientOrderId", limID)
	p.Set(stopLeg+"ClientOrderId", stopID)
	p.Set(stopLeg+"StopPrice", stop.StopPrice.String())
	if stop.Type == command.StopLimit {
		p.Set(stopLeg+"Type", string(bn.OrderTypeStopLossLimit))
		p.Set(stopLeg+"Price", stop.Price.String())
		p.Set(stopLeg+"TimeInForce", string(bn.TimeInForceTypeGTC))
	} else {
		p.Set(stopLeg+"Type", string(bn.OrderTypeStopLoss))
	}
	var res orderListResponse
	if err := a.signedPost(ctx, "/api/v3/orderList/oco", p, &res); err != nil {
		return nil, a.classify(err)
	}
	out := make([]node.VenueOrder, 0, 2)
	for _, want := range []string{limID, stopID} {
		i := slices.IndexFunc(res.OrderReports, func(r orderReport) bool { return r.ClientOrderID == want })
		if i < 0 {
			return nil, &node.VenueError{Kind: node.ErrVenueUnknown, Venue: a.name,
				Message: fmt.Sprintf("binance answered order list %d without leg %s; the node reads the legs back by client order id", res.OrderListID, want)}
		}
		out = append(out, a.cumulative(res.OrderReports[i].venueOrder(), res.OrderReports[i].OrderID))
	}
	return out, nil
}

// orderListResponse is orderList/oco's FULL answer.
type orderListResponse struct {
	OrderListID       int64         `json:"orderListId"`
	ContingencyType   string        `json:"contingencyType"`
	ListStatusType    string        `json:"listStatusType"`
	ListClientOrderID string        `json:"listClientOrderId"`
	OrderReports      []orderReport `json:"orderReports"`
}

type orderReport struct {
	Symbol                   string             `json:"symbol"`
	OrderID                  int64              `json:"orderId"`
	ClientOrderID            string             `json:"clientOrderId"`
	TransactTime             int64              `json:"transactTime"`
	Price                    string             `json:"price"`
	OrigQuantity             string             `json:"origQty"`
	ExecutedQuantity         string             `json:"executedQty"`
	CummulativeQuoteQuantity string             `json:"cummulativeQuoteQty"`
	Status                   bn.OrderStatusType `json:"status"`
	TimeInForce              bn.TimeInForceType `json:"timeInForce"`
	Type                     bn.OrderType       `json:"type"`
	Side                     bn.SideType        `json:"side"`
	StopPrice                string             `json:"stopPrice"`
}

func (r orderReport) venueOrder() node.VenueOrder {
	return fromOrder(&bn.Order{Symbol: r.Symbol, OrderID: r.OrderID, ClientOrderID: r.ClientOrderID, Price: r.Price, OrigQuantity: r.OrigQuantity,
		ExecutedQuantity: r.ExecutedQuantity, CummulativeQuoteQuantity: r.CummulativeQuoteQuantity, Status: r.Status, TimeInForce: r.TimeInForce,
		Type: r.Type, Side: r.Side, StopPrice: r.StopPrice, UpdateTime: r.TransactTime})
}

// signedPost sends one signed form POST (spot API "SIGNED endpoint
// security": HMAC SHA256 of the parameters, timestamp, X-MBX-APIKEY) for
// an endpoint the library does not serve, once; an error answer is a
// *common.APIError like the library's.
func (a *Adapter) signedPost(ctx context.Context, path string, p url.Values, out any) error {
	p.Set("timestamp", strconv.FormatInt(a.now().UnixMilli()-a.c.TimeOffset, 10))
	body := p.Encode()
	m := hmac.New(sha256.New, []byte(a.apiSecret))
	m.Write([]byte(body))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.c.BaseURL+path+"?signature="+hex.EncodeToString(m.Sum(nil)), strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-MBX-APIKEY", a.apiKey)
	resp, err := a.c.HTTPClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 400 {
		api := &common.APIError{}
		if json.Unmarshal(data, api) != nil || !api.IsValid() {
			api.Response = data
		}
		return api
	}
	return json.Unmarshal(data, out)
}

// Cancel cancels one order.
func (a *Adapter) Cancel(ctx context.Context, o node.VenueOrder) (node.VenueOrder, error) {
	s := a.c.NewCancelOrderService().Symbol(a.syms.Venue(o.Symbol))
	if id, err := strconv.ParseInt(o.VenueOrderID, 10, 64); err == nil {
		s = s.OrderID(id)
	} else {
		cid, err := ClientID(o.ClientOrderID)
		if err != nil {
			return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueNotFound, Venue: a.name, Message: err.Error()}
		}
		s = s.OrigClientOrderID(cid)
	}
	res, err := s.Do(ctx)
	if err != nil {
		return node.VenueOrder{}, a.classify(err)
	}
	// Fills the node has not heard of yet come with their commissions; the
	// cancel stands whatever this read says (the next read covers them).
	_ = a.coverFees(ctx, res.Symbol, res.OrderID, dec(res.ExecutedQuantity))
	return a.fromCancel(res), nil // cancel_all.go
}

// Replace is Binance's cancel-replace (STOP_ON_FAILURE): the open order is
// canceled and a new one for the rest placed, of the same type, under the
// next replacement client id — a LIMIT at its new price, a
// STOP_LOSS_LIMIT at its new stopPrice and price, a trailing STOP_LOSS at
// its new trailingDelta. The answer counts the old order's fills.
func (a *Adapter) Replace(ctx context.Context, o node.VenueOrder, r node.Replacement) (node.VenueOrder, error) {
	qty, price, stop, trail := r.Quantity, r.Price, r.StopPrice, r.TrailPercent
	if qty.IsZero() {
		qty = o.Quantity
	}
	if price.IsZero() {
		price = o.Price
	}
	if stop.IsZero() {
		stop = o.StopPrice
	}
	if trail.IsZero() {
		trail = o.TrailPercent
	}
	var bips int64
	switch o.Type {
	case command.Limit, command.StopLimit:
	case command.TrailingStop:
		var ok bool
		if bips, ok = a.trailingDelta(o.Symbol, trail); !ok || r.TrailAmount.IsPositive() {
			return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name, Message: a.trailingHint(o.Symbol) + "; nothing was sent"}
		}
	default:
		return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name,
			Message: fmt.Sprintf("binance cancel-replaces limit, stop_limit and trailing_stop orders, not %s; nothing was sent", o.Type)}
	}
	rest := qty.Sub(o.Filled)
	if !rest.IsPositive() {
		return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name,
			Message: fmt.Sprintf("new quantity %s is not above the filled %s", qty, o.Filled)}
	}
	cur, err := a.Lookup(ctx, o) // the live incarnation, and the fills so far
	if err != nil {
		return node.VenueOrder{}, err
	}
	if cur.State != node.VenueOpen {
		return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name, Message: "the order is no longer open at binance"}
	}
	venueCID, err := ClientID(o.ClientOrderID)
	if err != nil {
		return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name, Message: err.Error()}
	}
	oid, _ := strconv.ParseInt(cur.VenueOrderID, 10, 64)
	live, err := a.get(ctx, o.Symbol, cur.VenueOrderID, "")
	if err != nil {
		return node.VenueOrder{}, err
	}
	n, _ := replacementOf(live.ClientOrderID)
	next, err := replacementID(venueCID, n+1)
	if err != nil {
		return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name, Message: err.Error()}
	}
	rest = qty.Sub(cur.Filled)
	if !rest.IsPositive() {
		return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name,
			Message: fmt.Sprintf("new quantity %s is not above the filled %s", qty, cur.Filled)}
	}
	svc := a.c.NewCancelReplaceOrderService().Symbol(a.syms.Venue(o.Symbol)).Side(side(o.Side)).
		CancelReplaceMode(bn.CancelReplaceModeStopOnFailure).CancelOrderID(oid).NewClientOrderID(next).
		Quantity(rest.String()).NewOrderRespType(bn.NewOrderRespTypeFULL)
	switch o.Type {
	case command.Limit:
		svc = svc.Type(bn.OrderTypeLimit).Price(price.String()).TimeInForce(tif(o.TimeInForce))
	case command.StopLimit:
		svc = svc.Type(bn.OrderTypeStopLossLimit).StopPrice(stop.String()).Price(price.String()).TimeInForce(bn.TimeInForceTypeGTC)
	case command.TrailingStop:
		svc = svc.Type(bn.OrderTypeStopLoss).TrailingDelta(strconv.FormatInt(bips, 10))
	}
	res, err := svc.Do(ctx)
	if err != nil {
		return node.VenueOrder{}, a.classify(err)
	}
	if res.NewOrderResponse == nil || res.NewOrderResult != "SUCCESS" {
		return node.VenueOrder{}, &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name,
			Message: fmt.Sprintf("cancel-replace: cancel %s, new order %s", res.CancelResult, res.NewOrderResult)}
	}
	a.mu.Lock()
	before := a.prior[oid]
	a.mu.Unlock()
	if res.CancelResponse != nil {
		// the replaced incarnation's commissions: a fill since the lookup
		// is read (best effort: the replace is done whatever the read says)
		_ = a.coverFees(ctx, a.syms.Venue(o.Symbol), oid, dec(res.CancelResponse.ExecutedQuantity))
		asset, other := a.otherFeeOf(oid)
		before = before.add(fills{dec(res.CancelResponse.ExecutedQuantity), dec(res.CancelResponse.CummulativeQuoteQuantity), a.feeOf(oid), asset, other})
	} else {
		before = before.add(a.own(live))
	}
	a.bookFills(res.NewOrderResponse)
	a.setPrior(res.NewOrderResponse.OrderID, before)
	out := a.cumulative(fromCreate(res.NewOrderResponse), res.NewOrderResponse.OrderID)
	out.ClientOrderID = o.ClientOrderID
	return out, nil
}

// --- mapping ---

func minNotional(filters []map[string]any) decimal.Decimal {
	for _, f := range filters {
		if t, _ := f["filterType"].(string); t == "MIN_NOTIONAL" {
			if v, ok := f["minNotional"].(string); ok {
				return dec(v)
			}
		}
	}
	return decimal.Zero
}

func dec(s string) decimal.Decimal {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Zero
	}
	return d
}

func avg(quote string, filled decimal.Decimal) decimal.Decimal {
	if !filled.IsPositive() {
		return decimal.Zero
	}
	return dec(quote).DivRound(filled, 10)
}

func msTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

func side(s command.Side) bn.SideType {
	if s == command.Sell {
		return bn.SideTypeSell
	}
	return bn.SideTypeBuy
}

func sideOf(s bn.SideType) command.Side {
	if s == bn.SideTypeSell {
		return command.Sell
	}
	return command.Buy
}

func tif(t command.TimeInForce) bn.TimeInForceType {
	if t == command.IOC {
		return bn.TimeInForceTypeIOC
	}
	return bn.TimeInForceTypeGTC
}

func tifOf(t bn.TimeInForceType) command.TimeInForce {
	if t == bn.TimeInForceTypeIOC {
		return command.IOC
	}
	return command.GTC
}

func typeOf(t bn.OrderType) command.OrderType {
	switch t {
	case bn.OrderTypeMarket:
		return command.Market
	case bn.OrderTypeStopLossLimit, bn.OrderTypeTakeProfitLimit:
		return command.StopLimit
	case bn.OrderTypeStopLoss, bn.OrderTypeTakeProfit:
		return command.Stop
	}
	return command.Limit // LIMIT, LIMIT_MAKER
}

// stateOf maps Binance's order status (spot API "ENUM definitions", order
// status).
func stateOf(s bn.OrderStatusType) node.VenueState {
	switch s {
	case bn.OrderStatusTypeFilled:
		return node.VenueFilled
	case bn.OrderStatusTypeCanceled, bn.OrderStatusTypeExpired, "EXPIRED_IN_MATCH":
		return node.VenueCanceled
	case bn.OrderStatusTypeRejected:
		return node.VenueRejected
	}
	return node.VenueOpen // NEW, PARTIALLY_FILLED, PENDING_CANCEL
}

func fromOrder(o *bn.Order) node.VenueOrder {
	out := node.VenueOrder{ClientOrderID: NodeID(o.ClientOrderID), VenueOrderID: strconv.FormatInt(o.OrderID, 10), Symbol: o.Symbol,
		Side: sideOf(o.Side), Type: typeOf(o.Type), TimeInForce: tifOf(o.TimeInForce), Quantity: dec(o.OrigQuantity), Price: dec(o.Price),
		State: stateOf(o.Status), Filled: dec(o.ExecutedQuantity), Updated: msTime(o.UpdateTime), StopPrice: dec(o.StopPrice)}
	out.AveragePrice, out.Notional = avg(o.CummulativeQuoteQuantity, out.Filled), dec(o.CummulativeQuoteQuantity)
	return out
}

func fromCreate(r *bn.CreateOrderResponse) node.VenueOrder {
	out := node.VenueOrder{ClientOrderID: NodeID(r.ClientOrderID), VenueOrderID: strconv.FormatInt(r.OrderID, 10), Symbol: r.Symbol,
		Side: sideOf(r.Side), Type: typeOf(r.Type), TimeInForce: tifOf(r.TimeInForce), Quantity: dec(r.OrigQuantity), Price: dec(r.Price),
		State: stateOf(r.Status), Filled: dec(r.ExecutedQuantity), Updated: msTime(r.TransactTime)}
	out.AveragePrice, out.Notional = avg(r.CummulativeQuoteQuantity, out.Filled), dec(r.CummulativeQuoteQuantity)
	return out
}

// Secrets names the key values the adapter holds, for the node to scrub
// from what it logs, returns and journals (a venue's error text may echo
// them). They are never part of anything the adapter returns.
func (a *Adapter) Secrets() []string { return []string{a.apiKey, a.apiSecret} }
