package ledger

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"math"
	"path/filepath"
	"strconv"
	"testing"
)

// TestAppendFoldsItsOwnRows: an append folds its rows into the kept sums
// of each series whose sums were at the chain's tip, so the Trials that
// follows reads no row, and answers as a fresh read of every row does
// (NaN and infinite Sharpe ratios, uncounted kinds and several series in
// one batch); sums left behind by another handle's append are not
// folded, and Trials reads the rows they miss.
func TestAppendFoldsItsOwnRows(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "research.db")
	kept, other := openTest(t, path), openTest(t, path)
	series := []string{"BTC-USD@1h", "ETH-USD@1h"}
	through := func(s string) int64 {
		kept.sums.mu.Lock()
		defer kept.sums.mu.Unlock()
		if k := kept.sums.bySeries[s]; k != nil {
			return k.through
		}
		return -1
	}
	same := func(when string) {
		t.Helper()
		for _, s := range series {
			for _, scope := range Scopes {
				q := TrialQuery{Strategy: "rsi", Series: s, Scope: scope}
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
					t.Fatalf("%s, %+v: kept sums %+v, a fresh read %+v", when, q, got, want)
				}
			}
		}
	}
	batch := func(n int) []Row {
		var rows []Row
		for k := range n {
			r := row([]string{"sma_cross", "rsi"}[k%2], math.Sin(float64(k*13+n))/10, "s")
			r.Series = series[(k/3)%2]
			switch k % 7 {
			case 2:
				r.SharpePerPeriod = math.NaN()
			case 4:
				r.SharpePerPeriod = math.Inf(1)
			case 5:
				r.Kind = KindWalkForward // not counted
			}
			rows = append(rows, r)
		}
		return rows
	}
	if _, err := kept.Append(ctx, batch(9)); err != nil {
		t.Fatal(err)
	}
	same("before any fold") // the sums are read and kept
	for round := range 4 {
		rows := batch(11 + round)
		if _, err := kept.Append(ctx, rows); err != nil {
			t.Fatal(err)
		}
		last := rows[len(rows)-1].Seq
		for _, s := range series {
			if got := through(s); got != last {
				t.Fatalf("round %d: the sums of %s are through row %d after an append up to row %d: the append did not fold its rows", round, s, got, last)
			}
		}
		same("after an append that folded its rows")
	}
	rows := batch(6)
	if _, err := other.Append(ctx, rows); err != nil {
		t.Fatal(err)
	}
	mine := batch(8)
	if _, err := kept.Append(ctx, mine); err != nil {
		t.Fatal(err)
	}
	if got := through(series[0]); got >= rows[0].Seq {
		t.Fatalf("the sums are through row %d, past another handle's rows from %d that they never read", got, rows[0].Seq)
	}
	same("after another handle's append")
	if got, want := through(series[0]), mine[len(mine)-1].Seq; got != want {
		t.Fatalf("after Trials the sums are through row %d, not the tip %d", got, want)
	}
}

// TestAppendStoresWhatItAlwaysStored: what an append stores is what it
// stored when every JSON field went through json.Compact and each row's
// hash covered json.Marshal of its fields: the JSON fields compacted (as
// given when compact already), the hash the HMAC of that text, for rows
// with space in their JSON, characters json.Marshal escapes, and none.
func TestAppendStoresWhatItAlwaysStored(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "research.db")
	l := openTest(t, path)
	plain := row("sma_cross", 0.0125, "s")
	plain.Params, plain.Metrics = json.RawMessage(`{"fast":5,"slow":20}`), json.RawMessage(`{"sharpe":1.25,"start":"2024-01-01T00:00:00Z"}`)
	plain.Audit = json.RawMessage(`{"stats":{"sr":0.0125,"skew":-0.4,"kurt":3.2,"t":4000},"blocks":[{"n":250,"s":0.01,"q":1e-5}]}`)
	spaced := row("sma_cross", math.NaN(), "s <&>")
	spaced.Params = json.RawMessage("{ \"fast\" : 5,\n \"mode\": \"a <b> & \\u00e9 é\" }")
	spaced.Audit = json.RawMessage(" {\"stats\": {\"sr\": null} } ")
	spaced.Strategy, spaced.From = "strategy \"quoted\" \\ é", "2024-01-01T00:00:00Z\t"
	in := []Row{plain, spaced}
	want := make([]Row, len(in))
	for i, r := range in {
		want[i] = r
		for _, f := range []*json.RawMessage{&want[i].Params, &want[i].Costs, &want[i].Metrics, &want[i].Audit} {
			var buf bytes.Buffer
			if err := json.Compact(&buf, *f); err != nil {
				t.Fatal(err)
			}
			*f = buf.Bytes()
		}
	}
	if _, err := l.Append(ctx, in); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	prev := Genesis
	for i, w := range want {
		var seq int64
		var tm, params, costs, metrics, audit, prevHash, hash string
		var sr sql.NullFloat64
		if err := db.QueryRow(`SELECT seq, time, params, costs, metrics, audit, sharpe, prev_hash, hash FROM trials WHERE seq = ?`, i+1).
			Scan(&seq, &tm, &params, &costs, &metrics, &audit, &sr, &prevHash, &hash); err != nil {
			t.Fatal(err)
		}
		if params != string(w.Params) || costs != string(w.Costs) || metrics != string(w.Metrics) || audit != string(w.Audit) {
			t.Fatalf("row %d stores %s %s %s %s, json.Compact gives %s %s %s %s", seq, params, costs, metrics, audit, w.Params, w.Costs, w.Metrics, w.Audit)
		}
		srText := ""
		if sr.Valid {
			srText = strconv.FormatFloat(sr.Float64, 'g', -1, 64)
		}
		text, err := json.Marshal([]string{formatKeyed, strconv.FormatInt(seq, 10), tm, w.Kind, in[i].RunID, w.Who.Surface, w.Who.Session, w.Who.Caller,
			w.Strategy, w.Digest, w.Series, w.From, w.To, params, costs, metrics, srText, audit, prev})
		if err != nil {
			t.Fatal(err)
		}
		mac := hmac.New(sha256.New, testKey)
		mac.Write(text)
		if h := hex.EncodeToString(mac.Sum(nil)); prevHash != prev || hash != h {
			t.Fatalf("row %d: prev %s hash %s, the HMAC of json.Marshal's text is %s after %s", seq, prevHash, hash, h, prev)
		}
		prev = hash
	}
}
