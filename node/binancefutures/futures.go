// Package binancefutures is the node's adapter for a Binance USDⓈ-M
// perpetual futures account (environment testnet, the default, or live),
// through go-binance's futures client (github.com/adshao/go-binance/v2/
// futures) for REST, the listen-key user data stream for order, algo and
// account updates, and the Algo Order API (POST/GET/DELETE
// /fapi/v1/algoOrder, GET /fapi/v1/openAlgoOrders) for conditional orders,
// which Binance takes only there since December 2025 (the order endpoint
// answers -4120 for them); the library has no service for it, so those
// requests are signed here the way the library signs its own.
//
// At start (the first Instruments) it puts the account in one-way
// position mode and sets each symbol's leverage and margin type from
// wicket.toml's contracts, then reads them back and refuses to go on when
// they differ; it never changes leverage or margin type under an open
// position (Binance would re-margin it), it says what to write instead.
//
// It maps the node's vocabulary: market and limit (gtc/ioc) as orders;
// stop as STOP_MARKET, stop_limit as STOP, trailing_stop by percent as
// TRAILING_STOP_MARKET with callbackRate, an oco's or a bracket's
// take-profit limit as TAKE_PROFIT — each an algo order, reduceOnly; an
// oco as its two legs (Binance links none: the node cancels the other
// leg when one fills), a bracket as its entry now and its exits as such an
// oco once the entry has filled. Exits — group legs, stops and the market
// orders the node fires for the triggers it holds — are reduceOnly, so an
// exit can never open or grow a position. modify is Binance's in-place
// modify for a limit (PUT /fapi/v1/order: the order keeps its id and
// fills) and cancel-then-new for a conditional order (under the next
// replacement client id). Positions are read as the venue keeps them
// (signed quantity, entry, mark, unrealised P&L, leverage, margin,
// liquidation price), and a position the venue liquidated is reported
// closed with the liquidation order's price and time.
//
// Symbols travel in Binance's spelling and come back in the venue's
// list's (instrument.Listing, as at spot): a venue listing wicket's
// BTC-USD sends BTCUSDT and reads its positions, orders and funding as
// BTC-USD.
//
// It never resends a write: a submit, cancel or modify whose answer is
// lost is node.ErrVenueUnknown. Reads retry a bounded number of times;
// 429/418 answers close a gate until Retry-After. It never logs, returns or
// wraps a key, and never rounds a quantity or price.
package binancefutures

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/adshao/go-binance/v2/common"
	"github.com/adshao/go-binance/v2/futures"
	"github.com/shopspring/decimal"

	"wicket/internal/instrument"
	"wicket/internal/margin"
	"wicket/internal/project"
	"wicket/node"
	"wicket/node/binance"
	"wicket/node/command"
	"wicket/node/guardrail"
	"wicket/node/venuecall"
	"wicket/node/venuefee"
)

// Config configures an Adapter.
type Config struct {
	Venue     project.Venue // kind binance-futures; Environment, BaseURL, Symbols and Contracts are read
	APIKey    string
	APISecret string
	Timeout   time.Duration    // per HTTP request (default 10s)
	Now       func() time.Time // default time.Now
	Transport http.RoundTripper
}

// Adapter is one Binance USDⓈ-M futures account.
type Adapter struct {
	name, env         string
	venue             project.Venue
	c                 *futures.Client
	tr                *venuecall.Transport
	wsBase            string // the user data stream's base: <wsBase>/<listenKey>
	apiKey, apiSecret string
	now               func() time.Time
	syms              instrument.Listing // the venue's list: the node's symbols → Binance's (BTC-USD → BTCUSDT) and back

	// acct serialises account reads: each compares the positions with the
	// read before it (a liquidation between them), so two must not cross.
	acct sync.Mutex

	// Each map is keyed by Binance's symbol (BTCUSDT).
	mu       sync.Mutex
	symbols  map[string]*futures.Symbol
	quote    string
	prepared bool
	held     map[string]decimal.Decimal // symbol → quantity at the last account read
	closed   map[string]closure         // symbol → why its position closed, when the venue liquidated it
	actual   map[int64]algoRef          // order id of a triggered algo's order → the algo
	funding  map[string]decimal.Decimal // symbol → the funding rate in force, from the last marks
	readAt   time.Time                  // the last account read, which a liquidation is looked for after
	liquid   map[int64]bool             // liquidation orders reported already
	brackets map[string][]bracket       // symbol → its notional brackets, read at start

	fees venuefee.Ledger // order id → its trades' commissions (fees.go)
}

// bracket is one notional bracket of a symbol (USDⓈ-M "Notional and
// Leverage Brackets"): from floor to cap, the most leverage and the
// maintenance margin rate and amount (cum).
type bracket struct {
	InitialLeverage int             `json:"initialLeverage"`
	NotionalCap     decimal.Decimal `json:"notionalCap"`
	NotionalFloor   decimal.Decimal `json:"notionalFloor"`
	MaintMargin     decimal.Decimal `json:"maintMarginRatio"`
	Cum             decimal.Decimal `json:"cum"`
}

// closure is a liquidation the adapter learned of, and when.
type closure struct {
	why string
	at  time.Time // by the adapter's clock: a read begun before it may still show the position
}

// algoRef names an algo order the adapter has seen trigger (its symbol
// Binance's).
type algoRef struct {
	symbol, clientAlgoID string
}

// New makes an adapter. It reaches nothing until called.
func New(cfg Config) (*Adapter, error) {
	if cfg.APIKey == "" || cfg.APISecret == "" {
		return nil, fmt.Errorf("venue %s: binance futures keys missing: set %s and %s in the environment or settings/secrets.env",
			cfg.Venue.Name, project.KeyBinanceFuturesAPIKey, project.KeyBinanceFuturesAPISecret)
	}
	rest, ws := futures.BaseApiTestnetUrl, futures.BaseWsTestnetUrl
	if cfg.Venue.Environment == project.EnvLive {
		rest, ws = futures.BaseApiMainUrl, futures.BaseWsMainUrl
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
		ws = scheme + "://" + u.Host + strings.TrimSuffix(u.Path, "/") + "/ws"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	tr := &venuecall.Transport{Base: cfg.Transport, Now: cfg.Now}
	c := futures.NewClient(cfg.APIKey, cfg.APISecret)
	c.BaseURL = rest
	c.HTTPClient = &http.Client{Transport: tr, Timeout: cfg.Timeout}
	c.Logger.SetOutput(discard{}) // the library's debug log could carry a signed URL
	c.Debug = false
	// Binance's futures table with wicket.toml's overrides, whatever kind
	// the venue names (a test's may name none).
	syms, err := instrument.For(instrument.BinanceFutures, cfg.Venue.SymbolOverrides)
	if err != nil {
		return nil, fmt.Errorf("venue %s: %w", cfg.Venue.Name, err)
	}
	return &Adapter{name: cfg.Venue.Name, env: cfg.Venue.Environment, venue: cfg.Venue, c: c, tr: tr, wsBase: ws,
		apiKey: cfg.APIKey, apiSecret: cfg.APISecret, now: cfg.Now, syms: syms.Listing(cfg.Venue.Symbols), symbols: map[string]*futures.Symbol{},
		held: map[string]decimal.Decimal{}, closed: map[string]closure{}, actual: map[int64]algoRef{}, funding: map[string]decimal.Decimal{}, liquid: map[int64]bool{}, brackets: map[string][]bracket{}}, nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// Kind is "binance-futures".
func (a *Adapter) Kind() string { return project.KindBinanceFutures }

// Environment is testnet or live.
func (a *Adapter) Environment() string { return a.env }

// MarkSource says where marks come from.
func (a *Adapter) MarkSource() string {
	return "binance-futures " + a.env + ": mark price (GET /fapi/v1/premiumIndex)"
}

// Secrets names the key values the adapter holds, for the node to scrub.
func (a *Adapter) Secrets() []string { return []string{a.apiKey, a.apiSecret} }

// --- errors ---

// Binance USDⓈ-M error codes the adapter reads (futures "Error Codes").
const (
	codeUnknownOrder   = -2011 // CANCEL_REJECTED / unknown order sent
	codeNoSuchOrder    = -2013 // order does not exist
	codeReduceOnly     = -2022 // ReduceOnly Order is rejected
	codeTimeout        = -1007 // timeout waiting for response from backend server; send status unknown
	codeUnexpected     = -1006
	codeInvalidSymbol  = -1121
	codeNoMarginChange = -4046 // no need to change margin type
	codeNoModeChange   = -4059 // no need to change position side
)

func (a *Adapter) refused(msg string) error {
	return &node.VenueError{Kind: node.ErrVenueRejected, Venue: a.name, Message: msg}
}

// classify turns a library error into the node's kinds, as the spot
// adapter does.
func (a *Adapter) classify(err error) error {
	if err == nil {
		return nil
	}
	var api *common.APIError
	if errors.As(err, &api) {
		switch api.Code {
		case codeNoSuchOrder, codeUnknownOrder:
			return &node.VenueError{Kind: node.ErrVenueNotFound, Venue: a.name, Message: api.Message}
		case codeTimeout, codeUnexpected:
			return &node.VenueError{Kind: node.ErrVenueUnknown, Venue: a.name, Message: api.Message}
		case codeReduceOnly:
			return a.refused(fmt.Sprintf("code %d: %s (a reduce-only exit would open or grow a position: there is no position of that size on the other side)", api.Code, api.Message))
		}
		return a.refused(fmt.Sprintf("code %d: %s", api.Code, api.Message))
	}
	var rl *venuecall.RateLimited
	if errors.As(err, &rl) {
		return a.refused(rl.Error() + "; nothing was sent")
	}
	if venuecall.Unknown(err) {
		return &node.VenueError{Kind: node.ErrVenueUnknown, Venue: a.name, Message: venuecall.Message(err)}
	}
	return fmt.Errorf("%s: %s", a.name, venuecall.Message(err))
}

func apiCode(err error) int64 {
	var api *common.APIError
	if errors.As(err, &api) {
		return api.Code
	}
	return 0
}

// --- start: position mode, margin type, leverage ---

// prepare puts the account in one-way mode and each symbol's margin type
// and leverage as wicket.toml says, then checks them; once per adapter.
// Messages name a symbol as the venue's list writes it.
func (a *Adapter) prepare(ctx context.Context, symbols []string) error {
	a.mu.Lock()
	done := a.prepared
	a.mu.Unlock()
	if done {
		return nil
	}
	mode, err := venuecall.Read(ctx, a.tr, func() (*futures.PositionMode, error) { return a.c.NewGetPositionModeService().Do(ctx) })
	if err != nil {
		return a.classify(err)
	}
	if mode.DualSidePosition {
		if err := a.c.NewChangePositionModeService().DualSide(false).Do(ctx); err != nil && apiCode(err) != codeNoModeChange {
			return fmt.Errorf("%s: the account is in hedge mode and could not be put in one-way mode (close its positions and orders first): %w", a.name, a.classify(err))
		}
	}
	if err := a.readBrackets(ctx, symbols); err != nil {
		return err
	}
	risks, err := a.positionRisk(ctx)
	if err != nil {
		return err
	}
	for _, s := range symbols {
		vs := a.syms.Venue(s)
		want := a.venue.Contract(s)
		cur, ok := risks[vs]
		if !ok {
			return a.classify(&common.APIError{Code: codeInvalidSymbol, Message: "no position risk for " + vs})
		}
		open := !dec(cur.PositionAmt).IsZero()
		if marginOf(cur.MarginType) != want.MarginType {
			if open {
				return fmt.Errorf("%s: %s is %s-margined at binance with a position of %s open, and wicket.toml says %s: the margin type is never changed under an open position; close it or write margin_type = %q for %s",
					a.name, s, marginOf(cur.MarginType), cur.PositionAmt, want.MarginType, marginOf(cur.MarginType), s)
			}
			mt := futures.MarginTypeIsolated
			if want.MarginType == project.MarginCross {
				mt = futures.MarginTypeCrossed
			}
			if err := a.c.NewChangeMarginTypeService().Symbol(vs).MarginType(mt).Do(ctx); err != nil && apiCode(err) != codeNoMarginChange {
				return fmt.Errorf("%s: setting %s's margin type to %s: %w", a.name, s, want.MarginType, a.classify(err))
			}
		}
		if lev, _ := strconv.Atoi(cur.Leverage); lev != want.Leverage {
			if open {
				return fmt.Errorf("%s: %s is at leverage %d at binance with a position of %s open, and wicket.toml says %d: leverage is never changed under an open position; close it or write leverage = %d for %s",
					a.name, s, lev, cur.PositionAmt, want.Leverage, lev, s)
			}
			if _, err := a.c.NewChangeLeverageService().Symbol(vs).Leverage(want.Leverage).Do(ctx); err != nil {
				return fmt.Errorf("%s: setting %s's leverage to %d: %w", a.name, s, want.Leverage, a.classify(err))
			}
		}
	}
	if risks, err = a.positionRisk(ctx); err != nil {
		return err
	}
	for _, s := range symbols {
		want, cur := a.venue.Contract(s), risks[a.syms.Venue(s)]
		if lev, _ := strconv.Atoi(cur.Leverage); lev != want.Leverage || marginOf(cur.MarginType) != want.MarginType {
			return fmt.Errorf("%s: %s reads back at leverage %s, %s margin; wicket.toml says %d, %s", a.name, s, cur.Leverage, marginOf(cur.MarginType), want.Leverage, want.MarginType)
		}
	}
	a.mu.Lock()
	a.prepared = true
	a.mu.Unlock()
	return nil
}

// SetLeverage changes symbol's leverage at the venue, refused while the
// symbol has a position open (the venue would re-margin it under the
// node's feet); the check reads the position first.
func (a *Adapter) SetLeverage(ctx context.Context, symbol string, leverage int) error {
	risks, err := a.positionRisk(ctx)
	if err != nil {
		return err
	}
	vs := a.syms.Venue(symbol)
	if q := dec(risks[vs].PositionAmt); !q.IsZero() {
		return a.refused(fmt.Sprintf("leverage of %s is not changed while a position of %s is open; close it first", symbol, q))
	}
	if _, err := a.c.NewChangeLeverageService().Symbol(vs).Leverage(leverage).Do(ctx); err != nil {
		return a.classify(err)
	}
	return nil
}

func marginOf(s string) string {
	if strings.EqualFold(s, "cross") || strings.EqualFold(s, "crossed") {
		return project.MarginCross
	}
	return project.MarginIsolated
}

// positionRisk reads the positions' risk, by Binance's symbol.
func (a *Adapter) positionRisk(ctx context.Context) (map[string]*futures.PositionRisk, error) {
	list, err := venuecall.Read(ctx, a.tr, func() ([]*futures.PositionRisk, error) { return a.c.NewGetPositionRiskService().Do(ctx) })
	if err != nil {
		return nil, a.classify(err)
	}
	out := map[string]*futures.PositionRisk{}
	for _, p := range list {
		if p.PositionSide == "" || p.PositionSide == "BOTH" {
			out[p.Symbol] = p
		}
	}
	return out, nil
}

// --- reads ---

// Instruments reads exchangeInfo for the symbols, after putting the
// account as wicket.toml says (prepare). A symbol Binance does not list
// stops it, named in Binance's spelling, with the contract Binance lists
// for the same pair when there is one.
func (a *Adapter) Instruments(ctx context.Context, symbols []string) (map[string]guardrail.Instrument, error) {
	info, err := venuecall.Read(ctx, a.tr, func() (*futures.ExchangeInfo, error) { return a.c.NewExchangeInfoService().Do(ctx) })
	if err != nil {
		return nil, a.classify(err)
	}
	byName := map[string]*futures.Symbol{}
	for i := range info.Symbols {
		byName[info.Symbols[i].Symbol] = &info.Symbols[i]
	}
	if err := a.unknownSymbols(symbols, byName); err != nil {
		return nil, err
	}
	if err := a.prepare(ctx, symbols); err != nil {
		return nil, err
	}
	out := map[string]guardrail.Instrument{}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, name := range symbols {
		vs := a.syms.Venue(name)
		s := byName[vs]
		a.symbols[vs] = s
		in := guardrail.Instrument{Fractional: true, Shortable: true}
		if f := s.PriceFilter(); f != nil {
			in.Tick = dec(f.TickSize)
		}
		if f := s.LotSizeFilter(); f != nil {
			in.Step, in.MinQuantity = dec(f.StepSize), dec(f.MinQuantity)
			in.Fractional = in.Step.IsZero() || in.Step.LessThan(decimal.NewFromInt(1))
		}
		if f := s.MinNotionalFilter(); f != nil {
			in.MinNotional = dec(f.Notional)
		}
		out[a.syms.Listed(vs)] = in
	}
	if a.quote == "" && len(symbols) > 0 {
		a.quote = byName[a.syms.Venue(symbols[0])].QuoteAsset
	}
	return out, nil
}

// unknownSymbols is the error naming the symbols exchangeInfo (byName)
// does not list, each in Binance's spelling (BTCUSDT, with the list's
// BTC-USD after it) and with the contract Binance lists for the same pair
// when there is one (BTCUSDC: write BTC-USDC); nil when it lists all.
func (a *Adapter) unknownSymbols(symbols []string, byName map[string]*futures.Symbol) error {
	var missing []string
	for _, s := range symbols {
		vs := a.syms.Venue(s)
		if byName[vs] != nil {
			continue
		}
		what := a.syms.Named(s)
		for _, c := range binance.SymbolCandidates(s) {
			if c != vs && byName[c] != nil {
				canon, err := a.syms.Map().Canonical(c)
				if err != nil {
					canon = c
				}
				what += fmt.Sprintf(" (%s lists %s: write %s)", project.KindBinanceFutures, c, canon)
				break
			}
		}
		missing = append(missing, what)
	}
	if len(missing) == 0 {
		return nil
	}
	return &node.VenueError{Kind: node.ErrUnknownSymbol, Venue: a.name, Message: fmt.Sprintf(
		"%s does not list %s: list perpetual symbols binance USDⓈ-M futures trades in the symbols of venue %s in wicket.toml, in wicket's spelling (BTC-USD) or binance's (BTCUSDT), or map one in [symbols.%s]",
		project.KindBinanceFutures, strings.Join(missing, ", "), a.name, project.KindBinanceFutures)}
}

// Account reads the futures account: cash is the quote asset's wallet
// balance, buying power its available balance, positions each symbol's
// as the venue keeps it.
func (a *Adapter) Account(ctx context.Context) (node.Account, error) {
	a.mu.Lock()
	quote := a.quote
	a.mu.Unlock()
	if quote == "" {
		return node.Account{}, fmt.Errorf("%s: the account is read after the instruments (which name its margin asset)", a.name)
	}
	a.acct.Lock()
	defer a.acct.Unlock()
	a.mu.Lock()
	prev, began := a.readAt, a.now() // before the reads: what they show is at least this new
	a.readAt = began
	a.mu.Unlock()
	acct, err := venuecall.Read(ctx, a.tr, func() (*futures.Account, error) { return a.c.NewGetAccountService().Do(ctx) })
	if err != nil {
		return node.Account{}, a.classify(err)
	}
	risks, err := a.positionRisk(ctx)
	if err != nil {
		return node.Account{}, err
	}
	out := node.Account{ID: "USDⓈ-M futures (" + a.env + ")", Currency: quote, Margined: true}
	for _, as := range acct.Assets {
		if as.Asset == quote {
			out.Cash, out.BuyingPower = dec(as.WalletBalance), dec(as.AvailableBalance)
		}
	}
	for _, s := range a.venue.Symbols {
		vs := a.syms.Venue(s)
		p, ok := risks[vs]
		if !ok {
			continue
		}
		qty := dec(p.PositionAmt)
		a.mu.Lock()
		before := a.held[vs]
		a.held[vs] = qty
		why := a.closed[vs].why
		a.mu.Unlock()
		if qty.IsZero() {
			if !before.IsZero() && why == "" {
				why = a.liquidation(ctx, vs, before, prev)
			}
			if why != "" {
				out.Positions = append(out.Positions, node.VenuePosition{Symbol: s, Closed: why})
			}
			continue
		}
		a.mu.Lock()
		if c, ok := a.closed[vs]; ok && began.After(c.at) { // open again since the liquidation
			delete(a.closed, vs)
		}
		a.mu.Unlock()
		lev, _ := strconv.Atoi(p.Leverage)
		vp := node.VenuePosition{Symbol: s, Quantity: qty, AveragePrice: dec(p.EntryPrice), Mark: dec(p.MarkPrice),
			UnrealizedPnL: dec(p.UnRealizedProfit), Leverage: lev, MarginType: marginOf(p.MarginType), LiquidationPrice: dec(p.LiquidationPrice)}
		if vp.MarginType == project.MarginIsolated {
			vp.Margin = dec(p.IsolatedWallet)
		} else if lev > 0 {
			vp.Margin = dec(p.Notional).Abs().Div(decimal.NewFromInt(int64(lev))).Round(8)
		}
		out.Positions = append(out.Positions, vp)
	}
	return out, nil
}

// liquidation looks for the venue's liquidation of symbol's position
// (symbol Binance's; GET /fapi/v1/forceOrders, from the read before) when
// it closed between two reads, and says so; "" when it was closed
// otherwise.
func (a *Adapter) liquidation(ctx context.Context, symbol string, was decimal.Decimal, since time.Time) string {
	list, err := venuecall.Read(ctx, a.tr, func() ([]*futures.UserLiquidationOrder, error) {
		// a minute before the last read, for the clocks' skew
		return a.c.NewListUserLiquidationOrdersService().Symbol(symbol).StartTime(since.Add(-time.Minute).UnixMilli()).Limit(5).Do(ctx)
	})
	if err != nil {
		return ""
	}
	var last *futures.UserLiquidationOrder
	a.mu.Lock()
	for _, o := range list {
		if !a.liquid[o.OrderId] && (last == nil || o.Time > last.Time) {
			last = o
		}
	}
	a.mu.Unlock()
	if last == nil {
		return ""
	}
	why := fmt.Sprintf("liquidated by binance: the position of %s %s was closed by liquidation order %d, %s %s at %s (%s)", was, a.syms.Listed(symbol), last.OrderId,
		strings.ToLower(string(last.Side)), last.ExecutedQuantity, last.AveragePrice, msTime(last.Time).Format(time.RFC3339))
	a.mu.Lock()
	a.closed[symbol], a.liquid[last.OrderId] = closure{why, a.now()}, true
	a.mu.Unlock()
	return why
}

// Marks reads the mark prices (and keeps each symbol's funding rate in
// force, FundingRate).
func (a *Adapter) Marks(ctx context.Context, symbols []string) (map[string]decimal.Decimal, error) {
	list, err := venuecall.Read(ctx, a.tr, func() ([]*futures.PremiumIndex, error) { return a.c.NewPremiumIndexService().Do(ctx) })
	if err != nil {
		return nil, a.classify(err)
	}
	want := map[string]bool{}
	for _, vs := range a.syms.Venues(symbols) {
		want[vs] = true
	}
	out := map[string]decimal.Decimal{}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range list {
		if !want[p.Symbol] {
			continue
		}
		if d := dec(p.MarkPrice); d.IsPositive() {
			out[a.syms.Listed(p.Symbol)] = d
		}
		a.funding[p.Symbol] = dec(p.LastFundingRate)
	}
	return out, nil
}

// FundingRate is the funding rate in force for symbol (either spelling),
// as the last marks read it.
func (a *Adapter) FundingRate(symbol string) (decimal.Decimal, bool) {
	vs := a.syms.Venue(symbol)
	a.mu.Lock()
	defer a.mu.Unlock()
	r, ok := a.funding[vs]
	return r, ok
}

// --- mapping ---

func dec(s string) decimal.Decimal {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Zero
	}
	return d
}

func msTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

func side(s command.Side) futures.SideType {
	if s == command.Sell {
		return futures.SideTypeSell
	}
	return futures.SideTypeBuy
}

func sideOf(s string) command.Side {
	if s == string(futures.SideTypeSell) {
		return command.Sell
	}
	return command.Buy
}

func tif(t command.TimeInForce) futures.TimeInForceType {
	if t == command.IOC {
		return futures.TimeInForceTypeIOC
	}
	return futures.TimeInForceTypeGTC
}

func tifOf(t string) command.TimeInForce {
	if t == string(futures.TimeInForceTypeIOC) {
		return command.IOC
	}
	return command.GTC
}

// typeOf maps a futures order type (of an order or an algo order).
func typeOf(t string) command.OrderType {
	switch t {
	case "MARKET", "LIQUIDATION":
		return command.Market
	case "STOP_MARKET":
		return command.Stop
	case "STOP":
		return command.StopLimit
	case "TRAILING_STOP_MARKET":
		return command.TrailingStop
	}
	return command.Limit // LIMIT, TAKE_PROFIT (a take-profit limit)
}

// stateOf maps an order's status (futures "Common Definitions").
func stateOf(s string) node.VenueState {
	switch s {
	case "FILLED":
		return node.VenueFilled
	case "CANCELED", "EXPIRED", "EXPIRED_IN_MATCH":
		return node.VenueCanceled
	case "REJECTED":
		return node.VenueRejected
	}
	return node.VenueOpen // NEW, PARTIALLY_FILLED
}

// clientID is the node's id as Binance carries it (the spot adapter's
// mapping: the same 36-character rule).
func clientID(nodeID string) (string, error) { return binance.ClientID(nodeID) }

// nodeID reverses clientID.
func nodeID(venueID string) string { return binance.NodeID(venueID) }

// isExit reports whether a request is an exit, sent reduceOnly: a
// closing order (flatten, market_exit), a linked leg or a fired trigger
// (by its client id's suffix), or a stop type (the node's protective
// orders).
func isExit(r node.OrderRequest) bool {
	return r.ReduceOnly || r.Type.Protective() || strings.HasSuffix(r.ClientOrderID, node.StopLegSuffix) ||
		strings.HasSuffix(r.ClientOrderID, node.TakeProfitLegSuffix) || strings.HasSuffix(r.ClientOrderID, node.FireSuffix)
}

// Funding lists the funding payments the venue booked to the account
// since since (GET /fapi/v1/income, incomeType FUNDING_FEE, each by its
// tranId), oldest first, for the node to book once each.
func (a *Adapter) Funding(ctx context.Context, since time.Time) ([]node.Funding, error) {
	list, err := venuecall.Read(ctx, a.tr, func() ([]*futures.IncomeHistory, error) {
		return a.c.NewGetIncomeHistoryService().IncomeType("FUNDING_FEE").StartTime(since.UnixMilli()).Limit(1000).Do(ctx)
	})
	if err != nil {
		return nil, a.classify(err)
	}
	out := make([]node.Funding, 0, len(list))
	for _, in := range list {
		out = append(out, node.Funding{ID: strconv.FormatInt(in.TranID, 10), Symbol: a.syms.Listed(in.Symbol), Amount: dec(in.Income), Time: msTime(in.Time)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, nil
}

// readBrackets reads each symbol's notional brackets (GET
// /fapi/v1/leverageBracket, read here for its figures as decimals).
func (a *Adapter) readBrackets(ctx context.Context, symbols []string) error {
	for _, s := range symbols {
		vs := a.syms.Venue(s)
		list, err := venuecall.Read(ctx, a.tr, func() ([]struct {
			Symbol   string    `json:"symbol"`
			Brackets []bracket `json:"brackets"`
		}, error) {
			p := url.Values{}
			p.Set("symbol", vs)
			var out []struct {
				Symbol   string    `json:"symbol"`
				Brackets []bracket `json:"brackets"`
			}
			return out, a.signed(ctx, http.MethodGet, "/fapi/v1/leverageBracket", p, &out)
		})
		if err != nil {
			return a.classify(err)
		}
		for _, l := range list {
			if l.Symbol == vs && len(l.Brackets) > 0 {
				if max := l.Brackets[0].InitialLeverage; max > 0 && a.venue.Contract(s).Leverage > max {
					return fmt.Errorf("%s: wicket.toml's leverage %d for %s is above the %dx binance allows it; lower it", a.name, a.venue.Contract(s).Leverage, s, max)
				}
				a.mu.Lock()
				a.brackets[vs] = l.Brackets
				a.mu.Unlock()
			}
		}
	}
	return nil
}

// MaintenanceBrackets is symbol's (either spelling) maintenance margin
// table as the venue states it (its notional brackets, read at start,
// sorted by floor); none before the venue told it.
func (a *Adapter) MaintenanceBrackets(symbol string) []margin.Bracket[decimal.Decimal] {
	vs := a.syms.Venue(symbol)
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]margin.Bracket[decimal.Decimal], 0, len(a.brackets[vs]))
	for _, b := range a.brackets[vs] {
		out = append(out, margin.Bracket[decimal.Decimal]{Floor: b.NotionalFloor, Rate: b.MaintMargin, Amount: b.Cum})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Floor.LessThan(out[j].Floor) })
	return out
}
