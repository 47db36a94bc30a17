package research

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"wicket/internal/testkit"
)

// serve starts the data service over svc and returns a client of it.
func serve(t *testing.T, svc Service, opts ServerOptions, copts ClientOptions) *Client {
	t.Helper()
	n := 0
	var mu sync.Mutex
	if opts.NewID == nil {
		opts.NewID = func() string { mu.Lock(); defer mu.Unlock(); n++; return fmt.Sprintf("job-%d", n) }
	}
	srv := httptest.NewServer(NewServer(svc, opts))
	t.Cleanup(srv.Close)
	c, err := NewClient(srv.URL, copts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// outcome is a call's result and error in comparable form.
type outcome struct {
	JSON     string
	Kind     Kind
	Msg      string
	Problem  string
	Progress []Progress
}

func outcomeOf(t *testing.T, v any, err error, progress []Progress) outcome {
	t.Helper()
	o := outcome{Progress: progress}
	if err != nil {
		var re *Error
		if !errors.As(err, &re) {
			t.Fatalf("error %v (%T) is not a *research.Error", err, err)
		}
		o.Kind, o.Msg = re.Kind, re.Msg
		if re.Problem != nil {
			b, _ := json.Marshal(re.Problem)
			o.Problem = string(b)
		}
		return o
	}
	o.JSON = string(marshal(t, v))
	return o
}

// TestHTTPMatchesLocal: the data service and the in-process engine give
// identical JSON, identical errors and identical progress for the same
// requests.
func TestHTTPMatchesLocal(t *testing.T) {
	clock := testkit.NewSteppingClock(time.Unix(0, 0), time.Second)
	local := NewLocal(Config{ProofSeed: fixedSeed, Project: demoProject(t), Pool: newPool(t, 1), Now: clock.Now})
	client := serve(t, local, ServerOptions{}, ClientOptions{})
	sma := templateRef(t, "sma_cross")
	grid := Grid{"fast": {Values: []any{5.0, 10.0}}, "slow": {From: fp(30), To: fp(60), Step: fp(15)}}
	calls := []struct {
		name string
		call func(Service) (any, []Progress, error)
	}{
		{"list_series", func(s Service) (any, []Progress, error) { v, err := s.ListSeries(ctxT(t)); return v, nil, err }},
		{"list_strategies", func(s Service) (any, []Progress, error) { v, err := s.ListStrategies(ctxT(t)); return v, nil, err }},
		{"backtest", func(s Service) (any, []Progress, error) {
			v, err := s.Backtest(ctxT(t), BacktestRequest{StrategyRef: StrategyRef{Name: "mine"}, Series: "ETH-USD@1d", Plot: true, From: "2022-01-01"})
			return v, nil, err
		}},
		{"backtest unknown series", func(s Service) (any, []Progress, error) {
			v, err := s.Backtest(ctxT(t), BacktestRequest{StrategyRef: StrategyRef{Name: "mine"}, Series: "NOPE@1d"})
			return v, nil, err
		}},
		{"backtest broken", func(s Service) (any, []Progress, error) {
			v, err := s.Backtest(ctxT(t), BacktestRequest{StrategyRef: StrategyRef{Name: "broken"}, Series: "ETH-USD@1d"})
			return v, nil, err
		}},
		{"sweep", func(s Service) (any, []Progress, error) {
			var ps []Progress
			v, err := s.Sweep(ctxT(t), SweepRequest{StrategyRef: sma, Series: "BTC-USD@1d", Grid: grid, RankBy: RankTotalReturn, Top: 3}, func(p Progress) { ps = append(ps, p) })
			return v, ps, err
		}},
		{"sweep estimate", func(s Service) (any, []Progress, error) {
			v, err := s.Sweep(ctxT(t), SweepRequest{StrategyRef: sma, Series: "BTC-USD@1d", Grid: grid, Estimate: true}, nil)
			return v, nil, err
		}},
		{"sweep too many", func(s Service) (any, []Progress, error) {
			v, err := s.Sweep(ctxT(t), SweepRequest{StrategyRef: sma, Series: "BTC-USD@1d", Grid: Grid{"fast": {From: fp(2), To: fp(200)}, "slow": {From: fp(3), To: fp(400)}}}, nil)
			return v, nil, err
		}},
		{"sweep unknown knob", func(s Service) (any, []Progress, error) {
			v, err := s.Sweep(ctxT(t), SweepRequest{StrategyRef: sma, Series: "BTC-USD@1d", Grid: Grid{"speed": {Values: []any{1.0}}}}, nil)
			return v, nil, err
		}},
		{"walk-forward", func(s Service) (any, []Progress, error) {
			var ps []Progress
			v, err := s.WalkForward(ctxT(t), WalkForwardRequest{StrategyRef: sma, Series: "SOL-USD@1d", Grid: grid, Windows: 3, Anchored: true}, func(p Progress) { ps = append(ps, p) })
			return v, ps, err
		}},
		{"walk-forward warm-up", func(s Service) (any, []Progress, error) {
			v, err := s.WalkForward(ctxT(t), WalkForwardRequest{StrategyRef: sma, Series: "SOL-USD@1d", From: "2024-06-01", Grid: Grid{"slow": {Values: []any{300.0}}}, Windows: 4}, nil)
			return v, nil, err
		}},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			lv, lp, lerr := c.call(local)
			cv, cp, cerr := c.call(client)
			lo, co := outcomeOf(t, lv, lerr, lp), outcomeOf(t, cv, cerr, cp)
			if diff := cmp.Diff(lo, co); diff != "" {
				t.Errorf("in-process and HTTP differ (-local +http):\n%s", diff)
			}
			if strings.Contains(c.name, " ") && lo.Kind == "" && !strings.Contains(c.name, "estimate") {
				t.Errorf("%s succeeded: %s", c.name, lo.JSON)
			}
		})
	}
}

// observed records what a Local's Sweep returned, to see the server stop it.
type observed struct {
	*Local
	returned chan SweepResult
}

func (o observed) Sweep(ctx context.Context, req SweepRequest, progress func(Progress)) (SweepResult, error) {
	res, err := o.Local.Sweep(ctx, req, progress)
	o.returned <- res
	return res, err
}

var bigGrid = Grid{"fast": {From: fp(2), To: fp(40), Step: fp(2)}, "slow": {From: fp(50), To: fp(240), Step: fp(10)}}

// TestClientCancel: cancelling a Client's sweep asks the service to stop
// and returns what finished, marked partial, as Local does.
func TestClientCancel(t *testing.T) {
	client := serve(t, newLocal(t, 1), ServerOptions{}, ClientOptions{})
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	res, err := client.Sweep(ctx, SweepRequest{StrategyRef: templateRef(t, "sma_cross"), Series: "BTC-USD@1h", Grid: bigGrid}, func(p Progress) {
		if p.Done > 0 {
			cancel()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Partial || res.Evaluated == 0 || res.Evaluated >= 400 || !strings.Contains(res.PartialReason, "cancelled by the client") {
		t.Errorf("partial %v, evaluated %d, reason %q", res.Partial, res.Evaluated, res.PartialReason)
	}
}

// TestServerStopsWhenTheClientCloses: closing a streaming request stops
// the sweep behind it.
func TestServerStopsWhenTheClientCloses(t *testing.T) {
	svc := observed{Local: newLocal(t, 1), returned: make(chan SweepResult, 1)}
	srv := httptest.NewServer(NewServer(svc, ServerOptions{}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(ctxT(t))
	body := marshal(t, SweepRequest{StrategyRef: templateRef(t, "sma_cross"), Series: "BTC-USD@1h", Grid: bigGrid})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+PathSweep, bytes.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get(JobHeader) == "" || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("status %s, headers %v", resp.Status, resp.Header)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var l streamLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Progress == nil {
			t.Fatalf("line %s: %v", sc.Bytes(), err)
		}
		if l.Progress.Done > 0 {
			break
		}
	}
	cancel()
	resp.Body.Close()
	res := <-svc.returned
	if !res.Partial || res.Evaluated >= 400 {
		t.Errorf("the sweep ran on after the client left: partial %v, evaluated %d", res.Partial, res.Evaluated)
	}
}

func TestServerAuth(t *testing.T) {
	const token = "a-long-test-token-0123456789"
	local := NewLocal(Config{ProofSeed: fixedSeed, Project: demoProject(t)})
	for _, tc := range []struct {
		name, token string
		ok          bool
	}{{"no token", "", false}, {"wrong token", "a-long-test-token-0123456788", false}, {"right token", token, true}} {
		client := serve(t, local, ServerOptions{Token: token}, ClientOptions{Token: tc.token})
		_, err := client.ListSeries(ctxT(t))
		var re *Error
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case !tc.ok && (!errors.As(err, &re) || re.Kind != KindUnauthorized || !strings.Contains(re.Msg, "WICKET_DATA_TOKEN")):
			t.Errorf("%s: %v, want unauthorized", tc.name, err)
		}
	}
	srv := httptest.NewServer(NewServer(local, ServerOptions{Token: token}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + PathSeries)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("status %s, headers %v", resp.Status, resp.Header)
	}
}

func TestServerRequests(t *testing.T) {
	srv := httptest.NewServer(NewServer(NewLocal(Config{ProofSeed: fixedSeed, Project: demoProject(t)}), ServerOptions{}))
	defer srv.Close()
	for _, tc := range []struct {
		method, path, body string
		status             int
		kind               Kind
		want               string
	}{
		{"POST", PathSweep, `{"name":"mine","bogus":1}`, 400, KindInvalid, `unknown field "bogus"`},
		{"POST", PathBacktest, `{"name":`, 400, KindInvalid, "malformed request"},
		{"POST", PathBacktest, `{} {}`, 400, KindInvalid, "more than one JSON value"},
		{"GET", "/v1/nothing", "", 404, KindNotFound, "no endpoint GET /v1/nothing; the data service serves GET /v1/series"},
		{"GET", PathSweep, "", 404, KindNotFound, "no endpoint GET /v1/sweep"},
		{"POST", PathCancel + "job-9", "", 404, KindNotFound, `no running job "job-9"`},
		{"POST", PathBacktest, `{"name":"mine","series":"SPY@1d"}`, 503, KindUnavailable, "strategy workers are not available"},
	} {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var l streamLine
		json.NewDecoder(resp.Body).Decode(&l)
		resp.Body.Close()
		if resp.StatusCode != tc.status || l.Error == nil || l.Error.Kind != tc.kind || !strings.Contains(l.Error.Msg, tc.want) {
			t.Errorf("%s %s %s: %s %+v, want %d %s %q", tc.method, tc.path, tc.body, resp.Status, l.Error, tc.status, tc.kind, tc.want)
		}
	}
}

func TestClientUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.Listener.Addr().String()
	srv.Close()
	c, err := NewClient(addr, ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Sweep(ctxT(t), SweepRequest{}, nil)
	var re *Error
	if !errors.As(err, &re) || re.Kind != KindUnavailable || !strings.Contains(re.Msg, "cannot reach the data service at http://"+addr) {
		t.Errorf("%v", err)
	}
	for _, bad := range []string{"", "ftp://x:1", "http://"} {
		if _, err := NewClient(bad, ClientOptions{}); err == nil {
			t.Errorf("NewClient(%q) accepted", bad)
		}
	}
}
