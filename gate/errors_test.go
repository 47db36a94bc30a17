package gate_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"wicket/gate"
	"wicket/internal/testkit"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

type sampleError struct {
	name string
	err  error
}

// sampleErrors produces one real error of every kind and variant through the
// public API, on a fixed clock and id sequence.
func sampleErrors(t testing.TB) []sampleError {
	t.Helper()
	var out []sampleError
	add := func(name string, err error) {
		if err == nil {
			t.Fatalf("sample %q: the gate returned no error", name)
		}
		out = append(out, sampleError{name, err})
	}
	take := func(setup func(g *gate.PendingPreviews[gate.Fields], clk *testkit.Clock, tok gate.Token) (string, gate.Token, gate.Fields)) error {
		g, clk := newGate(gate.Options{})
		tok, _, _ := g.Issue("submit_order", order())
		tool, tok, cmd := setup(g, clk, tok)
		_, err := g.Take(tool, tok, cmd)
		return err
	}

	add("unknown", take(func(*gate.PendingPreviews[gate.Fields], *testkit.Clock, gate.Token) (string, gate.Token, gate.Fields) {
		return "submit_order", gate.Token(seqID(42)), order()
	}))
	_, err := gate.ParseToken("{" + seqID(1) + "}")
	add("malformed", err)
	add("expired", take(func(_ *gate.PendingPreviews[gate.Fields], clk *testkit.Clock, tok gate.Token) (string, gate.Token, gate.Fields) {
		clk.Advance(gate.PreviewWindow)
		return "submit_order", tok, order()
	}))
	add("used after success", take(func(g *gate.PendingPreviews[gate.Fields], clk *testkit.Clock, tok gate.Token) (string, gate.Token, gate.Fields) {
		clk.Advance(3 * time.Second)
		g.Take("submit_order", tok, order())
		return "submit_order", tok, order()
	}))
	add("used after mismatch", take(func(g *gate.PendingPreviews[gate.Fields], clk *testkit.Clock, tok gate.Token) (string, gate.Token, gate.Fields) {
		clk.Advance(3 * time.Second)
		g.Take("submit_order", tok, with(order(), "side", "sell"))
		return "submit_order", tok, order()
	}))
	add("wrong tool", take(func(*gate.PendingPreviews[gate.Fields], *testkit.Clock, gate.Token) (string, gate.Token, gate.Fields) {
		return "cancel_order", tokFor(1), order()
	}))
	add("changed fields", take(func(*gate.PendingPreviews[gate.Fields], *testkit.Clock, gate.Token) (string, gate.Token, gate.Fields) {
		return "submit_order", tokFor(1), with(with(order(), "quantity", "5"), "price", "-")
	}))
	g, _ := newGate(gate.Options{Max: 1})
	g.Issue("submit_order", order())
	_, _, err = g.Issue("submit_order", order())
	add("too many", err)
	return out
}

func tokFor(n int) gate.Token { return gate.Token(seqID(n)) }

// TestErrorTextGolden pins every refusal's text, the words an agent reads.
// Run with -update to rewrite testdata/errors.golden after a deliberate change.
func TestErrorTextGolden(t *testing.T) {
	var b strings.Builder
	for _, e := range sampleErrors(t) {
		b.WriteString("== " + e.name + " (" + kindOf(e.err).String() + ")\n")
		b.WriteString(e.err.Error() + "\n")
	}
	path := filepath.Join("testdata", "errors.golden")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./gate -run TestErrorTextGolden -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("error texts differ from %s (-want +got); rerun with -update if the change is meant:\n%s", path, diff)
	}
}

func TestKindString(t *testing.T) {
	tests := []struct {
		k    gate.Kind
		want string
	}{
		{gate.KindUnknown, "unknown"},
		{gate.KindExpired, "expired"},
		{gate.KindUsed, "used"},
		{gate.KindMismatch, "mismatch"},
		{gate.KindTooMany, "too_many"},
		{0, "Kind(0)"},
		{99, "Kind(99)"},
	}
	for _, tt := range tests {
		if got := tt.k.String(); got != tt.want {
			t.Errorf("Kind(%d).String() = %q, want %q", uint8(tt.k), got, tt.want)
		}
	}
}
