// Package provider brings real bars into the history store from market data
// providers (Binance, Alpaca; see the binance and alpaca subpackages).
//
// A Source is one provider behind a small interface: it maps a wicket
// symbol to the provider's own and streams closed bars page by page. Fetch
// drives a Source into a history.Store incrementally, committing each page
// as it arrives so a stopped fetch resumes where it stopped; Record keeps a
// live series growing from a provider's stream, back-filling over REST after
// a disconnect. Transport gives every client the same manners: 429 and
// Retry-After honoured, 5xx and timeouts retried a bounded number of times,
// requests paced.
//
// The package never reads keys itself (callers pass them in), never writes
// a key into an error, log or summary, and never sends anything but GET
// requests and websocket subscriptions to a provider.
package provider
