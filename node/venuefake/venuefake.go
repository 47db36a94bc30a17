// Package venuefake is the shared core of the fake venues the adapters
// are tested against (binancefake, binancefuturesfake, alpacafake): the
// user-data stream hub, the JSON answer of a processed request (with the
// order hook and the fault plan's lost answers, venuefault), the
// Binance family's signed-request check, and the matching rules every
// fake's book of resting orders applies (when a limit is reached, when a
// stop is traded through, how a trailing stop follows the price). Each
// fake keeps its own venue's order fields, endpoints and wire shapes.
//
// It is for tests only: only the fakes import it, it listens on nothing
// itself, and it never prints a key, a signature or a request.
package venuefake

import (
	"encoding/json"
	"net/http"

	"github.com/shopspring/decimal"

	"wicket/node/venuecall/venuefault"
)

// WriteJSON writes v as a JSON answer with status; a 204 has no body.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	if status == http.StatusNoContent {
		w.WriteHeader(status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v) //nolint:errcheck // test fake
}

// Answer finishes a request the fake has processed (its lock released):
// hook runs on the order taken, if both are there (before the answer, so
// a crash test can kill its client there), then the fault plan may lose
// the answer (venuefault.Faults.Drop), else status and body are written.
func Answer[O any](w http.ResponseWriter, r *http.Request, faults *venuefault.Faults, hook func(O), taken *O, status int, body any) {
	if hook != nil && taken != nil {
		hook(*taken)
	}
	if faults.Drop(w, r) {
		return
	}
	WriteJSON(w, status, body)
}

// Copies is a snapshot of a fake's orders, oldest first, for a test to
// read without the fake's lock.
func Copies[O any](list []*O) []O {
	out := make([]O, len(list))
	for i, o := range list {
		out[i] = *o
	}
	return out
}

// Reaches reports whether the last price reaches a limit: at or below it
// for a buy, at or above it for a sell. A resting limit the price
// reaches fills at its limit.
func Reaches(buy bool, last, limit decimal.Decimal) bool {
	if buy {
		return last.LessThanOrEqual(limit)
	}
	return last.GreaterThanOrEqual(limit)
}

// Through reports whether the last price has traded through a stop: at
// or above it for a buy, at or below it for a sell.
func Through(buy bool, last, stop decimal.Decimal) bool {
	if buy {
		return last.GreaterThanOrEqual(stop)
	}
	return last.LessThanOrEqual(stop)
}

// Improves reports whether the last price is a new best for a trailing
// stop: higher than best for a sell, lower for a buy.
func Improves(buy bool, last, best decimal.Decimal) bool {
	if buy {
		return last.LessThan(best)
	}
	return last.GreaterThan(best)
}

// Trail is a trailing stop's stop: off behind its best price (above it
// for a buy, below it for a sell).
func Trail(buy bool, best, off decimal.Decimal) decimal.Decimal {
	if buy {
		return best.Add(off)
	}
	return best.Sub(off)
}
