package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"wicket/node"
	"wicket/node/binance/binancefake"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/node/scrub"
	"wicket/node/venuerig"
)

// syncBuffer is a log destination the node's goroutines share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}
func (b *syncBuffer) String() string { b.mu.Lock(); defer b.mu.Unlock(); return b.buf.String() }

// TestVenueTextEchoingKeysIsScrubbed: a venue whose error texts echo the
// API key and secret (an order refusal, a stream refusal) gets neither
// into the node's log, its HTTP answers or its journal: each is
// redacted where it would have been.
func TestVenueTextEchoingKeysIsScrubbed(t *testing.T) {
	logs := &syncBuffer{}
	vn := startVenueNode(t, func(f *binancefake.Fake) venuerig.Venue { return binanceVenue("bn", "testnet", true, f) },
		nodetest.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	key, secret := vn.fake.APIKey, vn.fake.Secret
	vn.arm(t, "bn", time.Hour)
	vn.fake.RejectOrders("order refused for API-key " + key + " (secret " + secret + ")")
	out := send(t, vn.c, order("bn", "BTCUSDT", command.Buy, command.Limit, "0.01", "59000"), "")
	if out.Status != node.Rejected || !strings.Contains(out.Reason, "API-key "+scrub.Redacted) {
		t.Errorf("the refusal: %s %q", out.Status, out.Reason)
	}
	vn.fake.RefuseStreams(401, -2015, "Invalid API-key "+key)
	vn.fake.DropStreams()
	waitFor(t, "the stream's refusal logged", func() bool { return strings.Contains(logs.String(), "Invalid API-key "+scrub.Redacted) })

	answers, _ := json.Marshal(out)
	snap, err := vn.c.Snapshot(context.Background(), "bn", 100)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := json.Marshal(snap)
	page, err := vn.c.Audit(context.Background(), node.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(page)
	answers = append(append(answers, s...), a...)
	if !bytes.Contains(answers, []byte(scrub.Redacted)) {
		t.Errorf("the answers do not tell of the venue's refusal: %s", answers)
	}
	vn.srv.Close() // the journal's files whole
	files, _ := filepath.Glob(vn.srv.Journal + "*")
	var journal []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		journal = append(journal, b...)
	}
	if !bytes.Contains(journal, []byte(scrub.Redacted)) {
		t.Errorf("the journal (%v) does not hold the refusal", files)
	}
	for what, text := range map[string][]byte{"node.log": []byte(logs.String()), "HTTP answers": answers, "journal": journal} {
		for _, k := range []string{key, secret} {
			if bytes.Contains(text, []byte(k)) {
				t.Errorf("%s holds a venue key", what)
			}
		}
	}
}
