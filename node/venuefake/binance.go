package venuefake

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// BinanceError is a Binance error body: {"code": code, "msg": msg}.
func BinanceError(code int, msg string) map[string]any {
	return map[string]any{"code": code, "msg": msg}
}

// BinanceCheck says which of a Binance request's credentials an endpoint
// needs.
type BinanceCheck int

const (
	// Signed endpoints need the API key header and a valid signature.
	Signed BinanceCheck = iota
	// Keyed endpoints need the API key header only (a listen key's).
	Keyed
	// Public endpoints need neither.
	Public
)

// BinanceRequest reads a request as Binance's "General API Information"
// describes it: its parameters in the query and in a form body, the API
// key in X-MBX-APIKEY, and signature = hex HMAC-SHA256(secret, query
// without the signature + body) last in the query. It sets r.Form to the
// parameters and returns them; when the request is malformed or its
// credentials fail check it answers Binance's error and returns false.
func BinanceRequest(w http.ResponseWriter, r *http.Request, apiKey, secret string, check BinanceCheck) (url.Values, bool) {
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	form := r.URL.Query()
	bodyVals, err := url.ParseQuery(string(raw))
	if err != nil {
		WriteJSON(w, http.StatusBadRequest, BinanceError(-1100, "Illegal characters found in parameter"))
		return nil, false
	}
	for k, v := range bodyVals {
		form[k] = v
	}
	r.Form = form
	if check != Public && r.Header.Get("X-MBX-APIKEY") != apiKey {
		WriteJSON(w, http.StatusUnauthorized, BinanceError(-2015, "Invalid API-key, IP, or permissions for action."))
		return nil, false
	}
	if check == Signed && !signedQuery(r.URL.RawQuery, string(raw), secret) {
		WriteJSON(w, http.StatusBadRequest, BinanceError(-1022, "Signature for this request is not valid."))
		return nil, false
	}
	return form, true
}

// signedQuery checks the signature parameter ending query against the
// rest of the query and the body.
func signedQuery(q, body, secret string) bool {
	sig := ""
	if i := strings.Index(q, "&signature="); i >= 0 {
		sig, q = q[i+len("&signature="):], q[:i]
	} else if strings.HasPrefix(q, "signature=") {
		sig, q = q[len("signature="):], ""
	}
	return ValidHMAC(secret, q+body, sig)
}

// ValidHMAC checks sig (hex) against HMAC-SHA256(secret, payload); an
// empty sig is never valid.
func ValidHMAC(secret, payload, sig string) bool {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(payload))
	return sig != "" && hmac.Equal([]byte(sig), []byte(hex.EncodeToString(m.Sum(nil))))
}

// TradeRange is what a Binance trade-history request (spot myTrades,
// USDⓈ-M userTrades) selects: the trades of Symbol, of order OrderID
// when HasOrder, with an id at or above FromID when HasFrom, made at or
// after Start when HasStart and at or before End when HasEnd (epoch
// milliseconds).
type TradeRange struct {
	Symbol                              string
	OrderID, FromID, Start, End         int64
	HasOrder, HasFrom, HasStart, HasEnd bool
}

// Selects reports whether the trade id of order orderID in symbol, made
// at at, is in the range.
func (q TradeRange) Selects(symbol string, id, orderID, at int64) bool {
	return symbol == q.Symbol && (!q.HasOrder || orderID == q.OrderID) && (!q.HasFrom || id >= q.FromID) &&
		(!q.HasStart || at >= q.Start) && (!q.HasEnd || at <= q.End)
}
