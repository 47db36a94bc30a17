package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/strategy/research"
	"wicket/strategy/templates"
	"wicket/strategy/worker"
)

// TestDataServeEndToEnd starts the real binary's `wicket data serve`
// (with --allow-remote, so the bearer token is required) over a demo
// project, and checks that research.Client through it and research.Local
// in this process, with workers of the same binary, give identical JSON.
func TestDataServeEndToEnd(t *testing.T) {
	// testscript's TestMain put a copy of this binary named wicket in PATH.
	bin, err := exec.LookPath("wicket")
	if err != nil {
		t.Fatalf("the wicket test command is not in PATH: %v", err)
	}
	dir := t.TempDir()
	env := append(os.Environ(), project.EnvProject+"="+dir, project.KeyData+"=")
	wicket := func(args ...string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("wicket %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	wicket("init", dir)
	wicket("data", "seed-demo")

	token := testkit.Secret(t, 24) // made up for this run

	srv := exec.Command(bin, "data", "serve", "--listen", "127.0.0.1:0", "--allow-remote")
	srv.Env = append(env, project.KeyData+"="+token)
	stderr, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default: // the request log; nobody reads it
			}
		}
		close(lines)
		exited <- srv.Wait()
	}()
	t.Cleanup(func() {
		// testscript's copy of the binary has no signal handler (main.go's
		// is not in it), so stop it outright; TestDataServeStops covers a
		// clean stop.
		srv.Process.Kill()
		<-exited
	})
	var addr string
	for l := range lines {
		if m := regexp.MustCompile(`serving the research API of .* on (http://\S+) \(bearer token required\)`).FindStringSubmatch(l); m != nil {
			addr = m[1]
			break
		}
	}
	if addr == "" {
		t.Fatalf("the data service did not start: %v", <-exited)
	}

	ctx := t.Context()
	anon, err := research.NewClient(addr, research.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var re *research.Error
	if _, err := anon.ListSeries(ctx); !errors.As(err, &re) || re.Kind != research.KindUnauthorized {
		t.Errorf("without the token: %v", err)
	}
	client, err := research.NewClient(addr, research.ClientOptions{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	series, err := client.ListSeries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(series.Series) == 0 || series.Series[0].Series == "" {
		t.Fatalf("series %+v", series)
	}

	p := project.Project{Root: dir}
	cfg, err := p.Config()
	if err != nil {
		t.Fatal(err)
	}
	pool, err := worker.NewPool(worker.Config{Command: []string{bin}, Env: env, Size: 2, MemoryMiB: cfg.Research.WorkerMemoryMiB})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	local := research.NewLocal(research.Config{Project: p, Research: cfg.Research, Pool: pool})

	src, err := templates.Source("sma_cross")
	if err != nil {
		t.Fatal(err)
	}
	ref := research.StrategyRef{Source: src, Label: "sma_cross.star"}
	fp := func(x float64) *float64 { return &x }
	grid := research.Grid{"fast": {Values: []any{5.0, 10.0, 20.0}}, "slow": {From: fp(30), To: fp(90), Step: fp(20)}}
	sweep := research.SweepRequest{StrategyRef: ref, Series: "ETH-USD@1d", Grid: grid, Top: 5}
	wf := research.WalkForwardRequest{StrategyRef: ref, Series: "ETH-USD@1d", Grid: grid, Windows: 3}
	for name, call := range map[string]func(researcher) (any, error){
		"sweep":        func(s researcher) (any, error) { return s.Sweep(ctx, sweep, nil) },
		"walk-forward": func(s researcher) (any, error) { return s.WalkForward(ctx, wf, nil) },
	} {
		a, err := call(local)
		if err != nil {
			t.Fatalf("%s in-process: %v", name, err)
		}
		b, err := call(client)
		if err != nil {
			t.Fatalf("%s over HTTP: %v", name, err)
		}
		// The service records its runs in the project's research ledger;
		// this Local records nothing: only the ledger's fields differ.
		ja, jb := withoutLedger(t, a), withoutLedger(t, b)
		if !strings.Contains(string(mustMarshal(t, b)), `"run_id":"`) {
			t.Errorf("%s over HTTP carries no run_id", name)
		}
		if string(ja) != string(jb) {
			t.Errorf("%s: in-process and HTTP differ:\n%s\n%s", name, ja, jb)
		}
	}

}

// TestDataServeStops runs `wicket data serve` in this process and ends it
// the way a signal does, by cancelling its context: it stops serving and
// exits 0. (No strategy runs, so no worker of this test binary starts.)
func TestDataServeStops(t *testing.T) {
	dir := t.TempDir()
	if _, err := project.Init(dir, rand.Reader); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pr, pw := io.Pipe()
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"wicket", "--project", dir, "data", "serve", "--listen", "127.0.0.1:0"}, strings.NewReader(""), io.Discard, pw)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	var addr string
	for sc.Scan() {
		if m := regexp.MustCompile(`on (http://\S+) \(loopback only\)`).FindStringSubmatch(sc.Text()); m != nil {
			addr = m[1]
			break
		}
	}
	if addr == "" {
		t.Fatalf("no listening line; exit %d", <-code)
	}
	go io.Copy(io.Discard, pr)
	c, err := research.NewClient(addr, research.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	list, err := c.ListSeries(ctx)
	if err != nil || len(list.Series) != 0 || !strings.Contains(list.Note, "seed-demo") {
		t.Errorf("an empty project lists %+v, %v", list, err)
	}
	cancel()
	if got := <-code; got != 0 {
		t.Errorf("exit %d after the context ended", got)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// withoutLedger is v's JSON without the research ledger's fields.
func withoutLedger(t *testing.T, v any) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(mustMarshal(t, v), &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "run_id")
	delete(m, "ledger_deflated_sharpe")
	return maskProofSeeds(mustMarshal(t, m))
}
