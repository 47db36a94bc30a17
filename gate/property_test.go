package gate_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"wicket/gate"
	"wicket/internal/testkit"
)

// intent is the model of an order: what it asks for, independent of how its
// decimals are spelled. qty is in hundredths.
type intent struct {
	tool string
	side string
	qty  int
	cid  string // "" = not given (only a confirming call omits it)
}

var tools = []string{"submit_order", "cancel_order", "modify"}

func genIntent(t *rapid.T, label string) intent {
	return intent{
		tool: rapid.SampledFrom(tools).Draw(t, label+" tool"),
		side: rapid.SampledFrom([]string{"buy", "sell"}).Draw(t, label+" side"),
		qty:  rapid.IntRange(0, 3).Draw(t, label+" qty") * 50, // 0, 0.5, 1, 1.5
		cid:  rapid.SampledFrom([]string{"c-1", "c-2"}).Draw(t, label+" cid"),
	}
}

// spell renders hundredths as a decimal string in one of several spellings of
// the same value: "1.5", "1.50", "01.500", "+1.5".
func spell(t *rapid.T, label string, hundredths int) string {
	s := fmt.Sprintf("%d.%02d", hundredths/100, hundredths%100)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "" {
		s = "0"
	}
	if rapid.Bool().Draw(t, label+" trailing zeros") {
		if !strings.Contains(s, ".") {
			s += "."
		}
		s += strings.Repeat("0", rapid.IntRange(1, 3).Draw(t, label+" zeros"))
	}
	if rapid.Bool().Draw(t, label+" leading zero") {
		s = "0" + s
	}
	if rapid.Bool().Draw(t, label+" plus") {
		s = "+" + s
	}
	return s
}

// fields renders an intent as a command, spelling its quantity at random.
func (in intent) fields(t *rapid.T, label string) gate.Fields {
	f := gate.Fields{
		gate.Text("side", in.side),
		gate.Decimal("quantity", spell(t, label, in.qty)),
	}
	if in.cid != "" {
		f = append(f, gate.ClientID("client_order_id", in.cid))
	}
	return f
}

// differs is the oracle: the fields on which a confirming intent asks for
// something else than the previewed one.
func differs(previewed, confirming intent) []string {
	var d []string
	if previewed.side != confirming.side {
		d = append(d, "side")
	}
	if previewed.qty != confirming.qty {
		d = append(d, "quantity")
	}
	if confirming.cid != "" && confirming.cid != previewed.cid {
		d = append(d, "client_order_id")
	}
	return d
}

// TestTokenConfirmsOnlyItsCommand: of several outstanding previews, a token
// confirms exactly when the tool is the one it was issued for and the command
// is the same intent (any spelling of its decimals, client id optional); the
// stored command is what runs; and the attempt leaves every other token
// confirming its own command.
func TestTokenConfirmsOnlyItsCommand(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := gate.New[gate.Fields](gate.Options{})
		n := rapid.IntRange(1, 6).Draw(t, "previews")
		issued := make([]intent, n)
		stored := make([]gate.Fields, n)
		toks := make([]gate.Token, n)
		for i := range n {
			issued[i] = genIntent(t, fmt.Sprint("issue ", i))
			stored[i] = issued[i].fields(t, fmt.Sprint("issue ", i))
			var err error
			if toks[i], _, err = g.Issue(issued[i].tool, stored[i]); err != nil {
				t.Fatal(err)
			}
		}

		i := rapid.IntRange(0, n-1).Draw(t, "token")
		var conf intent
		if rapid.Bool().Draw(t, "confirm the issued intent") {
			conf = issued[i]
		} else {
			conf = genIntent(t, "confirm")
		}
		if rapid.Bool().Draw(t, "omit client id") {
			conf.cid = ""
		}
		got, err := g.Take(conf.tool, toks[i], conf.fields(t, "confirm"))

		wrongTool := conf.tool != issued[i].tool
		diff := differs(issued[i], conf)
		if !wrongTool && len(diff) == 0 {
			if err != nil {
				t.Fatalf("token for %v refused the same intent %v: %v", issued[i], conf, err)
			}
			if d := cmp.Diff(stored[i], got); d != "" {
				t.Fatalf("Take returned another command than the stored one (-stored +got):\n%s", d)
			}
		} else {
			var e *gate.Error
			if !errors.As(err, &e) || e.Kind != gate.KindMismatch {
				t.Fatalf("token for %v confirmed %v: got %v, %v; want a mismatch", issued[i], conf, got, err)
			}
			if e.IssuedFor != issued[i].tool {
				t.Fatalf("mismatch IssuedFor = %q, want %q", e.IssuedFor, issued[i].tool)
			}
			if wrongTool {
				if !strings.Contains(e.Error(), "issued for "+issued[i].tool+", not "+conf.tool) {
					t.Fatalf("wrong-tool text does not name both tools: %v", e)
				}
			} else {
				var ds gate.Differences
				if !errors.As(err, &ds) {
					t.Fatalf("mismatch without Differences: %v", err)
				}
				var named []string
				for _, d := range ds {
					named = append(named, d.Field)
				}
				if !cmp.Equal(named, diff) {
					t.Fatalf("mismatch names %v, oracle says %v", named, diff)
				}
			}
		}

		// Spent either way; every other token still confirms its own command.
		if _, err := g.Take(issued[i].tool, toks[i], stored[i]); !errors.Is(err, gate.ErrUsedToken) {
			t.Fatalf("token reused after a Take: %v", err)
		}
		for j := range n {
			if j == i {
				continue
			}
			if _, err := g.Take(issued[j].tool, toks[j], stored[j]); err != nil {
				t.Fatalf("token %d no longer confirms its own command: %v", j, err)
			}
		}
	})
}

// mtoken is the model's view of one issued token.
type mtoken struct {
	tok       gate.Token
	in        intent
	expires   time.Time
	state     string // "pending", "expired", "spent"
	at        time.Time
	confirmed bool
}

// TestGateAgainstModel runs random sequences of Issue, Take and clock moves
// against a plain model of the rules: expiry at exactly PreviewWindow, every
// Take spends, spent and expired tokens remembered for exactly RememberWindow,
// and the cap on outstanding previews.
func TestGateAgainstModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		const max = 4
		clk := testkit.NewClock(epoch)
		g := gate.New[gate.Fields](gate.Options{Now: clk.Now, NewID: new(ids).Next, Max: max, MaxRemembered: 1000})
		var model []*mtoken

		outstanding := func() int {
			n := 0
			for _, m := range model {
				if m.state == "pending" && clk.Now().Before(m.expires) {
					n++
				}
			}
			return n
		}

		t.Repeat(map[string]func(*rapid.T){
			"issue": func(t *rapid.T) {
				in := genIntent(t, "issue")
				tok, exp, err := g.Issue(in.tool, in.fields(t, "issue"))
				if outstanding() >= max {
					if !errors.Is(err, gate.ErrTooManyPreviews) {
						t.Fatalf("Issue with %d outstanding: %v, want too many", max, err)
					}
					return
				}
				if err != nil {
					t.Fatalf("Issue: %v", err)
				}
				model = append(model, &mtoken{tok: tok, in: in, expires: exp, state: "pending"})
			},
			"take": func(t *rapid.T) {
				var m *mtoken
				tok := gate.Token(seqID(rapid.IntRange(900, 901).Draw(t, "unissued")))
				if len(model) > 0 && rapid.IntRange(0, 9).Draw(t, "pick issued") > 0 {
					m = model[rapid.IntRange(0, len(model)-1).Draw(t, "which")]
					tok = m.tok
				}
				var conf intent
				if m != nil && rapid.Bool().Draw(t, "same intent") {
					conf = m.in
				} else {
					conf = genIntent(t, "confirm")
				}
				if rapid.Bool().Draw(t, "omit client id") {
					conf.cid = ""
				}
				_, err := g.Take(conf.tool, tok, conf.fields(t, "confirm"))
				want, confirmed := expectTake(m, conf, clk.Now())
				var e *gate.Error
				switch {
				case want == 0 && err != nil:
					t.Fatalf("Take of %v with %v: %v, want success", m, conf, err)
				case want == 0:
				case !errors.As(err, &e) || e.Kind != want:
					t.Fatalf("Take of %v with %v at +%v: %v, want kind %v", m, conf, clk.Now().Sub(epoch), err, want)
				case want == gate.KindUsed && e.Confirmed != confirmed:
					t.Fatalf("used token: Confirmed = %v, want %v", e.Confirmed, confirmed)
				}
			},
			"advance": func(t *rapid.T) {
				clk.Advance(rapid.SampledFrom([]time.Duration{
					0, time.Millisecond, time.Second, 30 * time.Second,
					gate.PreviewWindow - time.Millisecond, gate.PreviewWindow,
					5 * time.Minute, gate.RememberWindow,
				}).Draw(t, "advance"))
			},
			"": func(t *rapid.T) {
				if got, want := g.Outstanding(), outstanding(); got != want {
					t.Fatalf("Outstanding = %d, model says %d", got, want)
				}
			},
		})
	})
}

// expectTake applies the rules to the model: the kind a Take should fail
// with (0 for success), and for a used token whether it had confirmed. It
// updates m as the gate must.
func expectTake(m *mtoken, conf intent, now time.Time) (gate.Kind, bool) {
	if m == nil {
		return gate.KindUnknown, false
	}
	switch m.state {
	case "pending":
		if !now.Before(m.expires) {
			m.state, m.at = "expired", m.expires
			if !now.Before(m.expires.Add(gate.RememberWindow)) {
				return gate.KindUnknown, false
			}
			return gate.KindExpired, false
		}
		m.state, m.at = "spent", now
		if conf.tool != m.in.tool || len(differs(m.in, conf)) > 0 {
			return gate.KindMismatch, false
		}
		m.confirmed = true
		return 0, false
	case "expired", "spent":
		if !now.Before(m.at.Add(gate.RememberWindow)) {
			return gate.KindUnknown, false
		}
		if m.state == "expired" {
			return gate.KindExpired, false
		}
		return gate.KindUsed, m.confirmed
	}
	panic("model state " + m.state)
}
