package ledger

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"wicket/internal/testkit"
)

// testKey is a ledger key made for this test run.
var testKey = func() []byte {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		panic(err)
	}
	return k
}()

// keyEnv hands testKey to TestHelperWriter's process.
const keyEnv = "WICKET_LEDGER_TEST_KEY"

func openTest(t testing.TB, path string) *Ledger {
	t.Helper()
	n := 0
	var mu sync.Mutex
	l, err := Open(path, Options{Key: testKey, Now: testkit.NewSteppingClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), time.Second).Now, NewRunID: func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("run-%d", n)
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func row(strategy string, sr float64, who string) Row {
	return Row{
		Kind: KindSweep, Who: Who{Surface: SurfaceMCP, Session: who}, Strategy: strategy, Digest: SourceDigest(strategy),
		Series: "BTC-USD@1h", From: "2024-01-01T00:00:00Z", To: "2024-06-30T23:00:00Z",
		Params:  json.RawMessage(`{"fast": 5, "slow": 20}`),
		Costs:   json.RawMessage(`{"capital":"10000","fee_bps":10,"slippage_bps":5}`),
		Metrics: json.RawMessage(`{"sharpe": 1.25}`), SharpePerPeriod: sr,
	}
}

func TestAppendQueryAndSharpes(t *testing.T) {
	ctx := context.Background()
	l := openTest(t, filepath.Join(t.TempDir(), "state", "research.db"))
	batch := []Row{row("sma_cross", 0.01, "s1"), row("sma_cross", math.NaN(), "s1"), row("rsi", 0.02, "s1")}
	id, err := l.Append(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	if id != "run-1" || batch[0].RunID != "run-1" || batch[2].RunID != "run-1" {
		t.Fatalf("run id %q, rows %q %q", id, batch[0].RunID, batch[2].RunID)
	}
	if batch[0].Seq != 1 || batch[2].Seq != 3 || batch[0].PrevHash != Genesis || batch[1].PrevHash != batch[0].Hash {
		t.Fatalf("chain: %+v", batch)
	}
	if string(batch[0].Params) != `{"fast":5,"slow":20}` {
		t.Fatalf("params not compacted: %s", batch[0].Params)
	}
	bt := row("sma_cross", 0.03, "s2")
	bt.Kind = KindBacktest
	if _, err := l.Append(ctx, []Row{bt}); err != nil {
		t.Fatal(err)
	}
	wf := []Row{row("sma_cross", 0.5, "s2")}
	wf[0].Kind = KindWalkForward
	if _, err := l.Append(ctx, wf); err != nil {
		t.Fatal(err)
	}
	set, err := l.Trials(ctx, TrialQuery{Strategy: "sma_cross", Series: "BTC-USD@1h", Scope: ScopeStrategy})
	if err != nil {
		t.Fatal(err)
	}
	if sh := set.Sharpes; sh.Count != 2 || math.Abs(sh.Mean-0.02) > 1e-15 || math.Abs(sh.Variance()-0.0002) > 1e-15 || set.Strategy != 3 || set.Series != 4 || set.N() != 3 {
		t.Fatalf("trials %+v: want the sweep and backtest rows with a defined SR, not the walk-forward; N 3 (the failed one counted), 4 on the series", set)
	}
	got, total, err := l.Query(ctx, Filter{Strategy: "sma_cross", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if total != 4 || len(got) != 2 || got[0].Seq != 4 || got[1].Seq != 5 {
		t.Fatalf("query: total %d, rows %d (%v)", total, len(got), got)
	}
	if !math.IsNaN(func() float64 { r, _, _ := l.Query(ctx, Filter{RunID: "run-1"}); return r[1].SharpePerPeriod }()) {
		t.Fatal("a NaN Sharpe must read back as NaN")
	}
	since, _, err := l.Query(ctx, Filter{Since: time.Date(2026, 1, 2, 3, 4, 7, 0, time.UTC)})
	if err != nil || len(since) != 2 {
		t.Fatalf("since: %d rows, %v", len(since), err)
	}
	b, _ := json.Marshal(got[0])
	if !strings.Contains(string(b), `"sharpe_per_period":0.03`) || !strings.Contains(string(b), `"run_id":"run-2"`) {
		t.Fatalf("row JSON: %s", b)
	}
	rep, err := l.Verify(ctx)
	if err != nil || !rep.OK() || rep.Rows != 5 || rep.Tip != wf[0].Hash {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	if _, err := l.Append(ctx, []Row{{Kind: "nope", Strategy: "x", Series: "y"}}); err == nil {
		t.Fatal("an unknown kind must be refused")
	}
}

func TestOpenExistingMissing(t *testing.T) {
	_, err := OpenExisting(filepath.Join(t.TempDir(), "research.db"), Options{Key: testKey})
	if err == nil || !strings.Contains(err.Error(), "no research ledger yet") {
		t.Fatalf("err %v", err)
	}
}

// writerEnv makes the test binary a ledger writer (TestHelperWriter).
const writerEnv = "WICKET_LEDGER_TEST_WRITER"

// TestHelperWriter is the subprocess of TestConcurrentWriters: another
// process appending to the same ledger.
func TestHelperWriter(t *testing.T) {
	spec := os.Getenv(writerEnv)
	if spec == "" {
		t.Skip("a helper process for TestConcurrentWriters")
	}
	path, n, _ := strings.Cut(spec, "|")
	batches, _ := strconv.Atoi(n)
	key, err := hex.DecodeString(os.Getenv(keyEnv))
	if err != nil {
		t.Fatal(err)
	}
	l, err := Open(path, Options{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := range batches {
		rows := []Row{row("proc", float64(i), "proc"), row("proc", float64(i), "proc")}
		rows[0].Who, rows[1].Who = Who{Surface: SurfaceCLI}, Who{Surface: SurfaceCLI}
		if _, err := l.Append(context.Background(), rows); err != nil {
			t.Fatal(err)
		}
	}
}

// Two servers (two sets of goroutines, each on its own database handle)
// and a CLI (another process) append at once: one valid chain holds every
// row.
func TestConcurrentWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "research.db")
	const perWriter, goroutines, procBatches = 15, 3, 20
	openTest(t, path) // create it

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$", "-test.count=1")
	cmd.Env = append(os.Environ(), writerEnv+"="+path+"|"+strconv.Itoa(procBatches), keyEnv+"="+hex.EncodeToString(testKey))
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*goroutines)
	for server := range 2 {
		l := openTest(t, path)
		for g := range goroutines {
			wg.Go(func() {
				for i := range perWriter {
					size := 1 + (i+g)%4
					rows := make([]Row, size)
					for k := range rows {
						rows[k] = row(fmt.Sprintf("server%d", server), float64(i), fmt.Sprintf("s%d-%d", server, g))
					}
					if _, err := l.Append(context.Background(), rows); err != nil {
						errs <- err
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("writer process: %v\n%s", err, out)
	}
	want := 2 * procBatches
	for g := range goroutines {
		for i := range perWriter {
			want += 2 * (1 + (i+g)%4)
		}
	}
	l := openTest(t, path)
	rep, err := l.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Rows != want || rep.AnchoredSeq != int64(want) || len(rep.Notes) != 0 {
		t.Fatalf("verify: %+v, want %d rows in one valid chain", rep, want)
	}
	// Each batch is contiguous: one transaction, one run id, consecutive
	// sequence numbers.
	rows, _, err := l.Query(context.Background(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int64{}
	for _, r := range rows {
		key := r.Strategy + "/" + r.RunID // each handle mints its own ids
		if last, ok := seen[key]; ok && last != r.Seq-1 {
			t.Fatalf("run %s is split: row %d after row %d", key, r.Seq, last)
		}
		seen[key] = r.Seq
	}
}

func TestVerifyDetectsTampering(t *testing.T) {
	cases := []struct {
		name    string
		tamper  []string
		bad     int64
		message string
	}{
		{"edited", []string{`UPDATE trials SET metrics = '{"sharpe": 9.99}' WHERE seq = 3`}, 3, "edited"},
		{"edited sharpe", []string{`UPDATE trials SET sharpe = 0.5 WHERE seq = 4`}, 4, "edited"},
		{"deleted", []string{`DELETE FROM trials WHERE seq = 3`}, 4, "missing"},
		{"deleted first", []string{`DELETE FROM trials WHERE seq = 1`}, 2, "missing"},
		{"reordered", []string{
			`UPDATE trials SET seq = -1 WHERE seq = 2`, `UPDATE trials SET seq = 2 WHERE seq = 3`, `UPDATE trials SET seq = 3 WHERE seq = -1`,
		}, 2, "does not link"},
		{"rehashed edit", []string{`UPDATE trials SET metrics = '{}', hash = 'x' WHERE seq = 2`}, 2, "edited"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "research.db")
			l := openTest(t, path)
			for i := range 5 {
				if _, err := l.Append(context.Background(), []Row{row("sma_cross", float64(i)/100, "s")}); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := l.Verify(context.Background())
			if err != nil || !rep.OK() {
				t.Fatalf("before: %+v %v", rep, err)
			}
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range tc.tamper {
				if _, err := db.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			db.Close()
			rep, err = l.Verify(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK() || rep.Bad.Seq != tc.bad || !strings.Contains(rep.Bad.Reason, tc.message) {
				t.Fatalf("verify after %s: %+v (bad %+v), want row %d %q", tc.name, rep, rep.Bad, tc.bad, tc.message)
			}
		})
	}
}

// BenchmarkAppendBatch appends sweep-sized batches (64 rows, a chunk) and
// reports rows per second.
func BenchmarkAppendBatch(b *testing.B) {
	for _, size := range []int{1, 64, 1000} {
		b.Run(fmt.Sprintf("rows=%d", size), func(b *testing.B) {
			l := openTest(b, filepath.Join(b.TempDir(), "research.db"))
			rows := make([]Row, size)
			b.ResetTimer()
			for range b.N {
				for k := range rows {
					rows[k] = row("sma_cross", float64(k)/1000, "bench")
				}
				if _, err := l.Append(context.Background(), rows); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// TestTrialsKeptSumsMatchAFreshRead: one handle's Trials, which keeps
// each series' sums and reads only the rows after them, answers as a
// fresh handle reading every row does, after appends of its own and of
// another handle (another process) on several series and strategies, for
// both scopes, for the whole ledger and up to an earlier row, and its
// variance is the two-pass variance of the rows' Sharpe ratios.
func TestTrialsKeptSumsMatchAFreshRead(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "research.db")
	kept, other := openTest(t, path), openTest(t, path)
	series := []string{"BTC-USD@1h", "ETH-USD@1h"}
	var marks []int64
	for round := range 12 {
		var batch []Row
		for k := range 5 + round {
			r := row([]string{"sma_cross", "rsi", "donchian"}[(round+k)%3], math.Sin(float64(round*31+k))/10, "s")
			r.Series = series[(round*7+k)%2]
			if k%4 == 3 {
				r.SharpePerPeriod = math.NaN() // a failed trial: counted, no Sharpe ratio
			}
			if k%5 == 4 {
				r.Kind = KindWalkForward // not counted
			}
			batch = append(batch, r)
		}
		writer := []*Ledger{kept, other}[round%2]
		if _, err := writer.Append(ctx, batch); err != nil {
			t.Fatal(err)
		}
		marks = append(marks, batch[len(batch)-1].Seq)
		for _, q := range []TrialQuery{{Strategy: "rsi", Series: series[round%2]}, {Strategy: "sma_cross", Series: series[1-round%2], Scope: ScopeStrategy}} {
			if _, err := kept.Trials(ctx, q); err != nil { // moves the kept sums on
				t.Fatal(err)
			}
		}
	}
	for _, upTo := range []int64{0, marks[3], marks[8], marks[11]} {
		for _, s := range series {
			for _, strategy := range []string{"sma_cross", "rsi", "donchian", "none"} {
				for _, scope := range Scopes {
					q := TrialQuery{Strategy: strategy, Series: s, Scope: scope, UpTo: upTo}
					got, err := kept.Trials(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					fresh := openTest(t, path)
					want, err := fresh.Trials(ctx, q)
					fresh.Close()
					if err != nil {
						t.Fatal(err)
					}
					if got != want {
						t.Fatalf("%+v: kept sums %+v, a fresh read %+v", q, got, want)
					}
					counted, err := kept.TrialList(ctx, s, upTo)
					if err != nil {
						t.Fatal(err)
					}
					var srs []float64
					n := 0
					for _, c := range counted {
						if scope == ScopeSeries || c.Strategy == strategy {
							n++
							if !math.IsNaN(c.Sharpe) {
								srs = append(srs, c.Sharpe)
							}
						}
					}
					if got.N() != n || got.Sharpes.Count != len(srs) || math.Abs(got.Sharpes.Variance()-twoPassVariance(srs)) > 1e-15 {
						t.Fatalf("%+v: N %d of %d Sharpe ratios, variance %v; the rows say N %d, %d, variance %v",
							q, got.N(), got.Sharpes.Count, got.Sharpes.Variance(), n, len(srs), twoPassVariance(srs))
					}
				}
			}
		}
	}
}

func twoPassVariance(x []float64) float64 {
	if len(x) < 2 {
		return 0
	}
	var m, s float64
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return s / float64(len(x)-1)
}

// BenchmarkTrials is a sweep's ledger work on a series that already
// holds n counted trials: append 100 rows, then read the trials for the
// deflated Sharpe ratio. "kept" is one handle throughout (the MCP server,
// which reads only the rows since its last read); "fresh" reads with a
// new handle each time (every row, as a one-off command does).
func BenchmarkTrials(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		path := filepath.Join(b.TempDir(), "research.db")
		l := openTest(b, path)
		rows := make([]Row, 1000)
		for done := 0; done < n; done += len(rows) {
			for k := range rows {
				rows[k] = row([]string{"sma_cross", "rsi"}[k%2], float64(k)/1000, "bench")
			}
			if _, err := l.Append(context.Background(), rows); err != nil {
				b.Fatal(err)
			}
		}
		for _, handle := range []string{"kept", "fresh"} {
			b.Run(fmt.Sprintf("trials=%d/%s", n, handle), func(b *testing.B) {
				for range b.N {
					batch := make([]Row, 100)
					for k := range batch {
						batch[k] = row("sma_cross", float64(k)/1000, "bench")
					}
					if _, err := l.Append(context.Background(), batch); err != nil {
						b.Fatal(err)
					}
					reader := l
					if handle == "fresh" {
						reader = openTest(b, path)
					}
					q := TrialQuery{Strategy: "sma_cross", Series: "BTC-USD@1h", UpTo: batch[len(batch)-1].Seq}
					if set, err := reader.Trials(context.Background(), q); err != nil || set.N() < n {
						b.Fatalf("%+v, %v", set, err)
					}
					if reader != l {
						reader.Close()
					}
				}
			})
		}
	}
}
