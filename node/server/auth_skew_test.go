package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"wicket/node"
	"wicket/node/nodetest"
)

// staleMessage sends a health request signed with timestamp ts and returns
// the node's refusal message.
func staleMessage(t *testing.T, srv *nodetest.Server, ts string) string {
	t.Helper()
	req, err := http.NewRequest("GET", "http://"+srv.Addr+"/v1/health", nil)
	if err != nil {
		t.Fatal(err)
	}
	nonce := "0123456789abcdef0123"
	req.Header.Set(node.HeaderKey, node.KeyObserve)
	req.Header.Set(node.HeaderTimestamp, ts)
	req.Header.Set(node.HeaderNonce, nonce)
	req.Header.Set(node.HeaderSignature, node.Sign(srv.ObserveKey, "GET", "/v1/health", ts, nonce, nil))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var eb struct {
		Error *node.Error `json:"error"`
	}
	if err := json.Unmarshal(data, &eb); err != nil || eb.Error == nil || eb.Error.Code != "stale_timestamp" {
		t.Fatalf("timestamp %s: want stale_timestamp, got %d %s", ts, resp.StatusCode, data)
	}
	return eb.Error.Message
}

// TestStaleTimestampSaysTheOffset checks that the refusal of a timestamp
// outside the window names the real offset, however far, and recognises a
// timestamp sent in milliseconds.
func TestStaleTimestampSaysTheOffset(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	srv := nodetest.NewServer(t, nodetest.WithClock(func() time.Time { return now }))
	tests := []struct {
		name string
		ts   int64
		want []string
		not  []string
	}{
		{"behind", now.Add(-95 * time.Second).Unix(), []string{"1m35s behind the node's clock", "allowed: 30s"}, []string{"milliseconds"}},
		{"ahead", now.Add(2 * time.Hour).Unix(), []string{"2h0m0s ahead of the node's clock"}, []string{"milliseconds"}},
		{"milliseconds", now.UnixMilli(), []string{"ahead of the node's clock", "years", "looks like milliseconds", "unix seconds"}, []string{"2562047h"}},
		{"far past", -now.Unix(), []string{"years behind"}, []string{"2562047h", "milliseconds"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := staleMessage(t, srv, strconv.FormatInt(tt.ts, 10))
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q does not say %q", msg, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(msg, n) {
					t.Errorf("%q says %q", msg, n)
				}
			}
		})
	}
}
