package project

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/shopspring/decimal"
)

// Config is wicket.toml. Money is decimal; rates in basis points are plain
// numbers.
type Config struct {
	Node      NodeConfig  `toml:"node"`
	Venues    []Venue     `toml:"venues"`
	Guardrail Guardrail   `toml:"guardrail"`
	Research  Research    `toml:"research"`
	Agent     AgentConfig `toml:"agent"` // wicket mcp: approval and session budgets (agent.go)
	Risk      Risk        `toml:"risk"`  // pre-trade limits, throttles, dead man's switch (risk.go)
	// Providers are the market data providers' [providers.NAME] tables.
	Providers map[string]ProviderConfig `toml:"providers"`
	// Symbols are the [symbols.KIND] tables: per venue or provider kind,
	// wicket symbol = the kind's own spelling, over the kind's built-in
	// table (symbols.go, internal/instrument).
	Symbols map[string]map[string]string `toml:"symbols"`
	// Alerts is [alerts]: where the node's alerts go (alerts.go).
	Alerts Alerts `toml:"alerts"`
}

// NodeConfig says where the trading node listens and where clients find it.
type NodeConfig struct {
	Address string `toml:"address"` // host:port, loopback by default
}

// Venue is one venue of the node: kind "paper" (simulated), "alpaca" or
// "binance" (a real account; see venues.go).
type Venue struct {
	Name             string          `toml:"name"`
	Kind             string          `toml:"kind"`
	Environment      string          `toml:"environment"` // real venues: paper/live (alpaca), testnet/live (binance)
	MayArm           bool            `toml:"may_arm"`     // real venues: policy; without it the venue can never be armed
	BaseURL          string          `toml:"base_url"`    // real venues: the API endpoint instead of the environment's
	Currency         string          `toml:"currency"`
	Cash             decimal.Decimal `toml:"cash"`
	FeeBps           float64         `toml:"fee_bps"`
	SlippageBps      float64         `toml:"slippage_bps"`
	Symbols          []string        `toml:"symbols"`
	QuantityDecimals int32           `toml:"quantity_decimals"` // most decimals a quantity may carry
	PriceDecimals    int32           `toml:"price_decimals"`    // most decimals a price may carry
	// StartPrices seeds paper marks for symbols that have no demo history.
	StartPrices map[string]decimal.Decimal `toml:"start_prices"`
	// SymbolOverrides are the [symbols.KIND] table of the venue's kind,
	// given by Validate (Instruments, symbols.go).
	SymbolOverrides map[string]string `toml:"-"`
	// Marks (paper venues): "binance" or "alpaca" takes the marks from the
	// provider's last trade price instead of the random walk (venues.go).
	Marks string `toml:"marks"`
	// MaxMarkAge (paper venues with marks): how old a fed mark may be and
	// still fill or trigger an order; DefaultMaxMarkAge unless set (venues.go).
	MaxMarkAge time.Duration `toml:"max_mark_age"`
	// The venue's breakers (node/server/breakers.go): a loss over the UTC
	// day, or a drawdown from the venue's equity peak, beyond these moves
	// the venue to reduce_only until an operator clears it. Zero: none.
	MaxDailyLoss   decimal.Decimal `toml:"max_daily_loss"`
	MaxDrawdownPct decimal.Decimal `toml:"max_drawdown_pct"`
	// Futures (kind binance-futures, contracts.go): each symbol's
	// leverage and margin type, and the leverage guardrail's limits.
	Futures
}

// Guardrail holds the order limits. The client-side guardrail checks them
// before anything is sent; the node enforces the notional limits again.
type Guardrail struct {
	MaxOrderNotional    decimal.Decimal `toml:"max_order_notional"`
	MaxPositionNotional decimal.Decimal `toml:"max_position_notional"`
	PriceCollarPct      float64         `toml:"price_collar_pct"`
}

// Research holds backtest and sweep defaults.
type Research struct {
	Capital         decimal.Decimal `toml:"capital"`
	FeeBps          float64         `toml:"fee_bps"`
	SlippageBps     float64         `toml:"slippage_bps"`
	MaxCombinations int             `toml:"max_combinations"`
	WorkerMemoryMiB int             `toml:"worker_memory_mib"` // RLIMIT_AS of each strategy worker
	Workers         int             `toml:"workers"`           // 0 = one per core
	// Cluster, when set, is a NATS JetStream server (nats://host:port, or
	// tls:// for TLS) whose `wicket worker` processes run sweep chunks.
	Cluster string `toml:"cluster"`
	// ClusterCA, with a tls:// cluster, is a PEM file of the CA that
	// signed the NATS server's certificate (relative to the project).
	ClusterCA string `toml:"cluster_ca"`
	// BorrowRates are the annual borrow rates shorts pay, by symbol
	// (BTC-USD = 0.05); a run's own borrow_rate wins.
	BorrowRates map[string]float64 `toml:"borrow_rates"`
}

// DefaultNodeAddress is where a node listens unless wicket.toml says otherwise.
const DefaultNodeAddress = "127.0.0.1:7879"

// Defaults returns the configuration a new project starts with; it is also
// the base that Load fills in for keys a file leaves out.
func Defaults() Config {
	return Config{
		Node: NodeConfig{Address: DefaultNodeAddress},
		Venues: []Venue{{
			Name:             "paper",
			Kind:             "paper",
			Currency:         "USD",
			Cash:             decimal.NewFromInt(100000),
			FeeBps:           10,
			SlippageBps:      5,
			Symbols:          []string{"BTC-USD", "ETH-USD", "SOL-USD", "SPY"},
			QuantityDecimals: 6,
			PriceDecimals:    2,
		}},
		Guardrail: Guardrail{
			MaxOrderNotional:    decimal.NewFromInt(25000),
			MaxPositionNotional: decimal.NewFromInt(50000),
			PriceCollarPct:      10,
		},
		Research: Research{
			Capital:         decimal.NewFromInt(10000),
			FeeBps:          10,
			SlippageBps:     5,
			MaxCombinations: 5000,
			WorkerMemoryMiB: 2048,
		},
		Agent: AgentConfig{Approval: ApprovalNone},
		Risk:  Risk{OnSilence: OnSilencePause, MessageWindow: DefaultMessageWindow, IdenticalWindow: DefaultIdenticalWindow},
	}
}

// DefaultConfigText is the commented wicket.toml that `wicket init` writes.
// It decodes to Defaults().
const DefaultConfigText = `# wicket project configuration. Every key below shows its default.
# Money is written as a decimal string ("100000"); rates are in basis points.

[node]
# Where the trading node listens (wicket node serve) and where wicket trade
# and wicket mcp-config (for wicket mcp --node) find it. Keep it on loopback.
address = "127.0.0.1:7879"

# Paper venues: simulated matching, no exchange account needed. Add another
# [[venues]] table for a second venue with its own cash and symbols.
[[venues]]
name = "paper"
kind = "paper"
currency = "USD"
cash = "100000"
fee_bps = 10
slippage_bps = 5
symbols = ["BTC-USD", "ETH-USD", "SOL-USD", "SPY"]
# A quantity or price with more decimals than these is an error, never rounded.
quantity_decimals = 6
price_decimals = 2
# Marks start near the demo series' last close; symbols without history
# start at these prices (otherwise at 100).
# start_prices = { "BTC-USD" = "60000" }
# Real prices on paper: "binance" or "alpaca" polls the provider's last trade
# price of each symbol ([providers.NAME] below) instead of the random walk.
# marks = "binance"
# With marks, an order never fills against a mark older than this.
# max_mark_age = "5s"
# Breakers (docs/node.md "Venue breakers"): a loss over the UTC day, or a
# drawdown from the venue's equity peak, beyond these moves the venue to
# reduce_only until an operator runs wicket node clear-breaker.
# max_daily_loss = "500"
# max_drawdown_pct = "10"

# A real account instead (docs/node.md "Real venues"): kind "alpaca" (environment
# paper or live) or "binance" (testnet or live), keys in settings/secrets.env. It
# starts disarmed at every node start; an operator arms it at a terminal with
# wicket node arm NAME, and live ones only on a node run with --allow-live.
# [[venues]]
# name = "binance"
# kind = "binance"
# environment = "testnet"
# may_arm = true
# symbols = ["BTC-USD"]           # wicket's spelling; binance's own (BTCUSDT) works too

# Symbols are written one way (BTC-USD, SPY); each venue and provider kind
# maps them to its own (binance BTCUSDT, alpaca BTC/USD). A [symbols.KIND]
# table overrides that kind's mapping, for its venues and its provider.
# [symbols.binance]
# "BTC-USD" = "BTCFDUSD"

[guardrail]
# Checked before an order is sent (client side) and again by the node.
max_order_notional = "25000"
max_position_notional = "50000"
# A limit price further than this from the last mark is refused (percent).
price_collar_pct = 10

[research]
# Backtest defaults; a run's own arguments override them.
capital = "10000"
fee_bps = 10
slippage_bps = 5
# A sweep with more combinations than this is refused before any work.
max_combinations = 5000
# Strategy code runs in worker processes limited to this much memory.
worker_memory_mib = 2048
# Worker processes for sweeps; 0 means one per core.
workers = 0
# Run sweep chunks on the wicket workers of a NATS JetStream server (see
# docs/operations.md); tls:// with cluster_ca for a private CA.
# cluster = "nats://127.0.0.1:4222"
# cluster_ca = "settings/nats-ca.pem"

[agent]
# Defaults of wicket mcp's flags of the same names (the flags override them).
# Who must agree before a confirmed write is sent: "none" (the preview token
# is enough), "elicit" (the agent's client asks its user) or "operator" (a
# person at a terminal runs wicket approve).
approval = "none"
# Session budgets; 0 means no limit. Previews are free; confirmed writes count.
max_writes = 0
max_notional = "0"
max_writes_per_minute = 0

[risk]
# Pre-trade limits and throttles the node applies to every write (docs/node.md
# "Risk controls"); 0 or left out is no limit.
# Dead man's switch: without an operator's wicket node heartbeat for this long,
# auto deployments are paused ("cancel" also cancels their working orders).
# heartbeat = "15m"
on_silence = "pause"
# The same for one real venue whose order stream stays lost this long.
# stream_loss = "2m"
# Messages (submits, modifies, cancels) per venue and per deployment per window.
message_window = "1s"
# max_messages = 20
# max_deployment_messages = 5
# Identical orders within the window; past it they are refused until an
# operator runs wicket node reset-throttle.
identical_window = "1m"
# max_identical_orders = 3
# stop_collar_pct = 20
# Refuse an order that would cross the account's own resting order.
# self_trade = true
# Refuse equity orders at Alpaca while its clock says the market is closed.
# market_hours = true
# [risk.symbols."BTC-USD"]
# max_order_quantity = "2"
# max_order_notional = "50000"
# max_position = "5"
# [risk.venues.paper]
# max_daily_notional = "1000000"

# Market data providers for wicket data fetch and wicket data record. The
# defaults are the public endpoints; point base_url at a mirror or cache.
# [providers.binance]
# base_url = "https://api.binance.com"
# stream_url = "wss://stream.binance.com:9443"
# [providers.alpaca]
# base_url = "https://data.alpaca.markets"
# stream_url = "wss://stream.data.alpaca.markets"
# adjustment = "split"   # raw, split, dividend or all
`

// LoadConfig reads and validates wicket.toml at path. Keys the file leaves
// out keep their Defaults(). A syntax error names line and column; an
// unknown key is an error naming it.
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("read config: %w", err)
	}
	return ParseConfig(path, data)
}

// ParseConfig is LoadConfig on bytes already read; path only labels errors.
func ParseConfig(path string, data []byte) (Config, error) {
	cfg := Defaults()
	cfg.Venues = nil
	md, err := toml.Decode(string(data), &cfg)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return Config{}, fmt.Errorf("%s:%d:%d: %s", path, pe.Position.Line, pe.Position.Col, pe.Message)
		}
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		sort.Strings(keys)
		return Config{}, fmt.Errorf("%s: unknown key(s) %s; see the comments `wicket init` writes for the valid ones", path, strings.Join(keys, ", "))
	}
	if !md.IsDefined("venues") {
		cfg.Venues = Defaults().Venues
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// Validate checks the configuration's internal consistency and fills
// per-venue defaults.
func (c *Config) Validate() error {
	if c.Node.Address == "" {
		return fmt.Errorf("node.address is empty; set it to the node's HOST:PORT (the default is %q)", DefaultNodeAddress)
	}
	if err := validateSymbolTables(c.Symbols); err != nil {
		return err
	}
	seen := map[string]bool{}
	for i := range c.Venues {
		v := &c.Venues[i]
		if err := ValidName("venue", v.Name); err != nil {
			return fmt.Errorf("venues[%d]: %w", i, err)
		}
		if seen[v.Name] {
			return fmt.Errorf("venue %q is configured twice", v.Name)
		}
		seen[v.Name] = true
		if v.Kind == "" {
			v.Kind = KindPaper
		}
		if err := v.validateKind(); err != nil {
			return fmt.Errorf("venue %q: %w", v.Name, err)
		}
		if v.Currency == "" {
			v.Currency = "USD"
		}
		if v.Cash.IsNegative() {
			return fmt.Errorf("venue %q: cash %s is negative", v.Name, v.Cash)
		}
		if v.FeeBps < 0 || v.SlippageBps < 0 {
			return fmt.Errorf("venue %q: fee_bps and slippage_bps must not be negative", v.Name)
		}
		if len(v.Symbols) == 0 {
			return fmt.Errorf("venue %q lists no symbols", v.Name)
		}
		for _, s := range v.Symbols {
			if err := ValidName("symbol", s); err != nil {
				return fmt.Errorf("venue %q: %w", v.Name, err)
			}
		}
		if err := c.resolveVenueSymbols(v); err != nil {
			return fmt.Errorf("venue %q: %w", v.Name, err)
		}
		if err := v.validateContractSymbols(); err != nil {
			return fmt.Errorf("venue %q: %w", v.Name, err)
		}
		if v.QuantityDecimals == 0 {
			v.QuantityDecimals = 6
		}
		if v.PriceDecimals == 0 {
			v.PriceDecimals = 2
		}
		if v.QuantityDecimals < 0 || v.QuantityDecimals > 18 || v.PriceDecimals < 0 || v.PriceDecimals > 18 {
			return fmt.Errorf("venue %q: quantity_decimals and price_decimals must be 0..18", v.Name)
		}
	}
	g := c.Guardrail
	if !g.MaxOrderNotional.IsPositive() || !g.MaxPositionNotional.IsPositive() {
		return errors.New("guardrail.max_order_notional and guardrail.max_position_notional must be positive")
	}
	if g.PriceCollarPct <= 0 || g.PriceCollarPct > 100 {
		return fmt.Errorf("guardrail.price_collar_pct %v must be in (0, 100]", g.PriceCollarPct)
	}
	r := c.Research
	if !r.Capital.IsPositive() {
		return errors.New("research.capital must be positive")
	}
	if r.FeeBps < 0 || r.SlippageBps < 0 {
		return errors.New("research.fee_bps and research.slippage_bps must not be negative")
	}
	if r.MaxCombinations <= 0 {
		return errors.New("research.max_combinations must be positive")
	}
	if r.WorkerMemoryMiB < 64 {
		return fmt.Errorf("research.worker_memory_mib %d is below the 64 MiB minimum", r.WorkerMemoryMiB)
	}
	if r.Workers < 0 {
		return errors.New("research.workers must not be negative")
	}
	for sym, v := range r.BorrowRates {
		if err := ValidName("research.borrow_rates symbol", sym); err != nil {
			return err
		}
		if !(v >= 0 && v <= 10) {
			return fmt.Errorf("research.borrow_rates.%s %v must be an annual fraction from 0 to 10 (0.05 is 5%% a year)", sym, v)
		}
	}
	if err := ValidateClusterURL(r.Cluster); err != nil {
		return fmt.Errorf("research.cluster: %w", err)
	}
	if err := ValidateClusterCA(r.Cluster, r.ClusterCA); err != nil {
		return fmt.Errorf("research.cluster_ca: %w", err)
	}
	if err := validateProviders(c.Providers); err != nil {
		return err
	}
	if err := c.Agent.validate(); err != nil {
		return err
	}
	if err := c.Agent.validateEnvelope(c.Venues); err != nil {
		return err
	}
	if err := c.Risk.validate(c.Venues); err != nil {
		return err
	}
	return c.Alerts.validate()
}

// Venue returns the configured venue with that name.
func (c *Config) Venue(name string) (Venue, bool) {
	for _, v := range c.Venues {
		if v.Name == name {
			return v, true
		}
	}
	return Venue{}, false
}

// VenueNames lists the configured venue names in file order.
func (c *Config) VenueNames() []string {
	names := make([]string, len(c.Venues))
	for i, v := range c.Venues {
		names[i] = v.Name
	}
	return names
}

// Config loads this project's wicket.toml.
func (p Project) Config() (Config, error) { return LoadConfig(p.ConfigPath()) }
