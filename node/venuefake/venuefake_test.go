package venuefake

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/shopspring/decimal"

	"wicket/internal/testkit"
	"wicket/node/venuecall/venuefault"
)

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func TestMatchingRules(t *testing.T) {
	cases := []struct {
		name string
		got  bool
		want bool
	}{
		{"buy limit reached at its limit", Reaches(true, d("100"), d("100")), true},
		{"buy limit not reached above it", Reaches(true, d("101"), d("100")), false},
		{"sell limit reached above it", Reaches(false, d("101"), d("100")), true},
		{"sell limit not reached below it", Reaches(false, d("99"), d("100")), false},
		{"buy stop traded through above it", Through(true, d("101"), d("100")), true},
		{"buy stop not through below it", Through(true, d("99"), d("100")), false},
		{"sell stop traded through below it", Through(false, d("99"), d("100")), true},
		{"sell stop not through above it", Through(false, d("101"), d("100")), false},
		{"sell trail improves higher", Improves(false, d("101"), d("100")), true},
		{"sell trail not lower", Improves(false, d("99"), d("100")), false},
		{"buy trail improves lower", Improves(true, d("99"), d("100")), true},
		{"buy trail not equal", Improves(true, d("100"), d("100")), false},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: got %v", c.name, c.got)
		}
	}
	if got := Trail(false, d("100"), d("2")); !got.Equal(d("98")) {
		t.Errorf("sell trail stop = %s, want 98", got)
	}
	if got := Trail(true, d("100"), d("2")); !got.Equal(d("102")) {
		t.Errorf("buy trail stop = %s, want 102", got)
	}
}

func TestCopiesAreSnapshots(t *testing.T) {
	type order struct{ status string }
	list := []*order{{"NEW"}}
	got := Copies(list)
	list[0].status = "FILLED"
	if len(got) != 1 || got[0].status != "NEW" {
		t.Fatalf("Copies = %+v, want a snapshot taken before the change", got)
	}
}

func sign(secret, payload string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(payload))
	return hex.EncodeToString(m.Sum(nil))
}

func TestBinanceRequest(t *testing.T) {
	key, secret := testkit.Secret(t, 16), testkit.Secret(t, 16)
	var got url.Values
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		check := Signed
		if r.URL.Path == "/public" {
			check = Public
		}
		form, ok := BinanceRequest(w, r, key, secret, check)
		if ok {
			got = form
			WriteJSON(w, 200, map[string]any{})
		}
	}))
	defer srv.Close()
	do := func(path, query, body, apiKey string) int {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL+path+"?"+query, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-MBX-APIKEY", apiKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	q := "symbol=BTCUSDT&timestamp=1"
	if s := do("/order", q+"&signature="+sign(secret, q+"side=BUY"), "side=BUY", key); s != 200 || got.Get("side") != "BUY" || got.Get("symbol") != "BTCUSDT" {
		t.Fatalf("signed request: status %d, form %v", s, got)
	}
	if s := do("/order", q+"&signature="+sign(secret, q), "side=BUY", key); s != 400 {
		t.Errorf("a signature that leaves the body out: status %d, want 400", s)
	}
	if s := do("/order", q, "", key); s != 400 {
		t.Errorf("no signature: status %d, want 400", s)
	}
	if s := do("/order", q+"&signature="+sign(secret, q), "", "other"); s != 401 {
		t.Errorf("wrong API key: status %d, want 401", s)
	}
	if s := do("/public", "symbol=BTCUSDT", "", ""); s != 200 {
		t.Errorf("public endpoint: status %d, want 200", s)
	}
	if s := do("/order", q, "%zz", key); s != 400 {
		t.Errorf("malformed body: status %d, want 400", s)
	}
}

func TestAnswerRunsHookThenLosesOrWrites(t *testing.T) {
	var faults venuefault.Faults
	var hooked []int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := 7
		Answer(w, r, &faults, func(v int) { hooked = append(hooked, v) }, &n, 200, map[string]int{"n": n})
	}))
	defer srv.Close()
	faults.DropResponses("/x", 1)
	if _, err := http.Get(srv.URL + "/x"); err == nil {
		t.Fatal("a dropped answer arrived")
	}
	resp, err := http.Get(srv.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || len(hooked) != 2 {
		t.Fatalf("status %d, hook ran %d times; want 200 and 2 (the hook runs before a lost answer too)", resp.StatusCode, len(hooked))
	}
}

func TestHubSendsTaggedEventsAndDrops(t *testing.T) {
	var hub Hub[int]
	added := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := Upgrade(w, r)
		if err != nil {
			return
		}
		hub.Add(c, hub.Len()+40)
		added <- struct{}{}
		hub.Listen(c)
	}))
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http")
	var clients []*websocket.Conn
	for range 2 {
		c, _, err := websocket.DefaultDialer.Dial(url, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients = append(clients, c)
		<-added // the handler registers it after the handshake

	}
	hub.Send(websocket.TextMessage, func(tag int) []byte { return []byte{byte(tag)} })
	seen := map[byte]bool{}
	for _, c := range clients {
		_, msg, err := c.ReadMessage()
		if err != nil || len(msg) != 1 {
			t.Fatalf("read %v %v", msg, err)
		}
		seen[msg[0]] = true
	}
	if !seen[40] || !seen[41] {
		t.Fatalf("tags seen %v, want 40 and 41", seen)
	}
	hub.Drop()
	if hub.Len() != 0 {
		t.Fatalf("after Drop %d connections", hub.Len())
	}
	if _, _, err := clients[0].ReadMessage(); err == nil {
		t.Fatal("a dropped connection still reads")
	}
}

func TestTradeRangeSelects(t *testing.T) {
	all := TradeRange{Symbol: "BTCUSDT"}
	if !all.Selects("BTCUSDT", 1, 9, 100) || all.Selects("ETHUSDT", 1, 9, 100) {
		t.Error("a range of a symbol alone selects that symbol's trades only")
	}
	q := TradeRange{Symbol: "BTCUSDT", OrderID: 9, HasOrder: true, FromID: 2, HasFrom: true}
	if q.Selects("BTCUSDT", 1, 9, 100) || q.Selects("BTCUSDT", 2, 8, 100) || !q.Selects("BTCUSDT", 2, 9, 100) {
		t.Error("orderId and fromId")
	}
	span := TradeRange{Symbol: "BTCUSDT", Start: 100, HasStart: true, End: 200, HasEnd: true}
	if span.Selects("BTCUSDT", 1, 9, 99) || !span.Selects("BTCUSDT", 1, 9, 100) || !span.Selects("BTCUSDT", 1, 9, 200) || span.Selects("BTCUSDT", 1, 9, 201) {
		t.Error("startTime and endTime are inclusive bounds")
	}
}
