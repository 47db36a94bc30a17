package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/node/scrub"
)

// TestNodeLogHoldsNoVenueKey: `wicket node serve --log` on a venue whose
// error texts echo its API key and secret (an order refusal, a stream
// refusal): node.log, the HTTP answer and the journal hold [redacted],
// never the keys.
func TestNodeLogHoldsNoVenueKey(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real node process")
	}
	vp := newVenueProject(t)
	logPath := filepath.Join(vp.dir, "settings", "state", "node.log")
	_, c, stderr := vp.start(t, "--log", logPath)
	addr := strings.TrimSuffix(strings.TrimPrefix(c.String(), "node.Client("), ")")
	if out, err := vp.armAtTerminal(t, addr, "bn", "bn"); err != nil {
		t.Fatalf("arm: %v\n%s", err, out)
	}
	key, secret := vp.fake.APIKey, vp.fake.Secret
	vp.fake.RejectOrders("refused for API-key " + key + " with secret " + secret)
	cmd := command.Command{Verb: command.SubmitOrder, Venue: "bn", Symbol: "BTCUSDT", Side: command.Buy, Type: command.Limit,
		Quantity: testkit.D("0.01"), Price: testkit.D("59000")}
	out, err := nodetest.Send(context.Background(), c, command.NewEnvelope(cmd, ""), 5*time.Second)
	if out.Status != node.Rejected || !strings.Contains(out.Reason, "API-key "+scrub.Redacted) {
		t.Errorf("the refusal: %+v %v", out, err)
	}
	vp.fake.RefuseStreams(401, -2015, "Invalid API-key "+key)
	vp.fake.DropStreams()
	deadline := time.Now().Add(10 * time.Second)
	var logText []byte
	for !bytes.Contains(logText, []byte("Invalid API-key "+scrub.Redacted)) {
		if time.Now().After(deadline) {
			t.Fatalf("node.log never told of the stream's refusal:\n%s", logText)
		}
		time.Sleep(50 * time.Millisecond)
		logText, _ = os.ReadFile(logPath)
	}
	answer, _ := json.Marshal(out)
	p, err := project.Find(vp.dir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(p.JournalPath() + "*")
	var journal []byte
	for _, f := range files {
		b, _ := os.ReadFile(f)
		journal = append(journal, b...)
	}
	if !bytes.Contains(journal, []byte(scrub.Redacted)) {
		t.Errorf("the journal (%v) does not hold the refusal", files)
	}
	for what, text := range map[string][]byte{"node.log": logText, "stderr": []byte(stderr.String()), "the HTTP answer": answer, "the journal": journal} {
		if bytes.Contains(text, []byte(key)) || bytes.Contains(text, []byte(secret)) {
			t.Errorf("%s holds a venue key", what)
		}
	}
}
