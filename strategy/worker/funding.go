package worker

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/shopspring/decimal"

	"wicket/strategy/backtest"
	"wicket/strategy/history"
)

// Funding is the perpetual funding a run over one pair charges: the
// store's settlements of a span. Held reports whether the store holds
// the pair's funding at all; a run charges funding (its figures report
// it) whenever it does, even with no settlement in the span.
type Funding struct {
	Held  bool
	Rates []history.FundingRate
}

// StoreFunding reads the funding of series' pair between from and to
// (inclusive) from the history store at path, as want ("auto", "on",
// "off": backtest.CostOptions.FundingWanted) asks: "auto" charges it
// when the store holds the pair's funding, "on" requires it, "off"
// never reads. A store that is gone is no funding under "auto".
func StoreFunding(path, series, want string, from, to time.Time) (Funding, error) {
	if want == "off" {
		return Funding{}, nil
	}
	sym, _, err := history.CheckSeries(series)
	if err != nil {
		return Funding{}, err
	}
	store, err := history.OpenReadOnly(path)
	if history.IsNotFound(err) && want == "auto" {
		return Funding{}, nil // bars from a cache, the store gone since: no funding to find
	}
	if err != nil {
		return Funding{}, err
	}
	defer store.Close()
	return FundingOf(store, sym, want, from, to)
}

// FundingOf is StoreFunding from a store open already (a worker keeps
// one open between requests), for the pair sym.
func FundingOf(store *history.Store, sym, want string, from, to time.Time) (Funding, error) {
	if want == "off" {
		return Funding{}, nil
	}
	info, err := store.FundingInfo(sym)
	if err != nil {
		return Funding{}, err
	}
	if info.Count == 0 {
		if want == "on" {
			return Funding{}, &backtest.Error{Kind: backtest.KindInvalid, Msg: fmt.Sprintf("funding: the history store holds no funding rates for %s; fetch them with `wicket data fetch --funding %s`, or leave funding out", sym, sym)}
		}
		return Funding{}, nil
	}
	rates, err := store.Funding(sym, from, to)
	if err != nil {
		return Funding{}, err
	}
	return Funding{Held: true, Rates: rates}, nil
}

// Clip is f's settlements between from and to (inclusive, to the
// millisecond, as the store selects them).
func (f Funding) Clip(from, to time.Time) Funding {
	out := Funding{Held: f.Held}
	for _, r := range f.Rates {
		if ms := r.Time.UnixMilli(); ms >= from.UnixMilli() && ms <= to.UnixMilli() {
			out.Rates = append(out.Rates, r)
		}
	}
	return out
}

// fundingWire is Funding as it ships to another machine: the settlement
// times in Unix milliseconds (the store's precision) and the rates as
// decimal strings, so the worker charges what the store holds.
type fundingWire struct {
	Rates []fundingRateWire `json:"rates"`
}

type fundingRateWire struct {
	Time int64           `json:"t"`
	Rate decimal.Decimal `json:"r"`
}

// Encode is f in the form a research cluster ships it (a store's held
// funding; f.Held is implied), and FundingDigest its name.
func (f Funding) Encode() []byte {
	w := fundingWire{Rates: make([]fundingRateWire, len(f.Rates))}
	for i, r := range f.Rates {
		w.Rates[i] = fundingRateWire{Time: r.Time.UnixMilli(), Rate: r.Rate}
	}
	b, _ := json.Marshal(w) // cannot fail: ints and decimals
	return b
}

// FundingDigest is the SHA-256, in hex, of encoded funding: the name it
// ships under, which the chunk that needs it carries.
func FundingDigest(encoded []byte) string {
	sum := sha256.Sum256(encoded)
	return hex.EncodeToString(sum[:])
}

// ReadFundingFile reads funding shipped into the file at path, refusing
// it unless it hashes to digest.
func ReadFundingFile(path, digest string) (Funding, error) {
	if digest == "" {
		return Funding{}, &Error{Kind: KindRequest, Msg: "sweep request with a funding file but no funding digest"}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Funding{}, &Error{Kind: KindRequest, Msg: "read the shipped funding: " + err.Error()}
	}
	if got := FundingDigest(b); got != digest {
		return Funding{}, &Error{Kind: KindRequest, Msg: fmt.Sprintf("the shipped funding does not match its digest (%.12s, want %.12s): refused; run the sweep again to ship it anew", got, digest)}
	}
	var w fundingWire
	if err := json.Unmarshal(b, &w); err != nil {
		return Funding{}, &Error{Kind: KindRequest, Msg: "the shipped funding is malformed: " + err.Error()}
	}
	f := Funding{Held: true, Rates: make([]history.FundingRate, len(w.Rates))}
	for i, r := range w.Rates {
		f.Rates[i] = history.FundingRate{Time: time.UnixMilli(r.Time).UTC(), Rate: r.Rate}
	}
	return f, nil
}
