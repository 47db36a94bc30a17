package binance

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/adshao/go-binance/v2/common"
)

// Signer sends signed requests (Binance's "SIGNED endpoint security":
// HMAC SHA256 of the parameters with a timestamp, X-MBX-APIKEY) to
// endpoints the client library does not serve, for the spot and the
// futures adapter alike.
type Signer struct {
	BaseURL     string
	HTTP        *http.Client
	Key, Secret string
	// Now and Offset (ms, the library's TimeOffset) give the timestamp.
	Now    func() time.Time
	Offset int64
}

// Do sends one signed request once: p in the form body (inBody, a spot
// POST) or in the query. An error answer is a *common.APIError like the
// library's; out takes a success's JSON.
func (s Signer) Do(ctx context.Context, method, path string, p url.Values, inBody bool, out any) error {
	p.Set("timestamp", strconv.FormatInt(s.Now().UnixMilli()-s.Offset, 10))
	params := p.Encode()
	m := hmac.New(sha256.New, []byte(s.Secret))
	m.Write([]byte(params))
	sig := "signature=" + hex.EncodeToString(m.Sum(nil))
	target, body := s.BaseURL+path+"?"+params+"&"+sig, io.Reader(nil)
	if inBody {
		target, body = s.BaseURL+path+"?"+sig, strings.NewReader(params)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return err
	}
	if inBody {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("X-MBX-APIKEY", s.Key)
	resp, err := s.HTTP.Do(req)
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
