package server_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/binance/binancefake"
	"wicket/node/nodetest"
	"wicket/node/venuerig"
)

// postArm sends body to POST /v1/venues/{venue}/arm signed with the
// control key (a fresh nonce each time) and returns the status and body.
func postArm(t *testing.T, srv *nodetest.Server, venue string, body []byte) (int, string) {
	t.Helper()
	path := "/v1/venues/" + venue + "/arm"
	req, err := http.NewRequest(http.MethodPost, "http://"+srv.Addr+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	ts, nonce := node.Timestamp(time.Now()), node.NewNonce()
	req.Header.Set(node.HeaderKey, node.KeyControl)
	req.Header.Set(node.HeaderTimestamp, ts)
	req.Header.Set(node.HeaderNonce, nonce)
	req.Header.Set(node.HeaderSignature, node.Sign(srv.ControlKey, http.MethodPost, path, ts, nonce, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(msg)
}

// signedArm is an arming of venue for d signed with key over a challenge
// the node just issued.
func signedArm(t *testing.T, vn *venueNode, venue string, d time.Duration, key ed25519.PrivateKey) node.ArmRequest {
	t.Helper()
	info, err := vn.c.Arming(context.Background(), venue)
	if err != nil || info.Challenge == "" {
		t.Fatalf("arming %s: no challenge: %+v %v", venue, info, err)
	}
	req := node.ArmRequest{For: d.String(), Confirm: venue, Challenge: info.Challenge}
	req.Signature = node.SignOperator(key, req.Statement(venue))
	return req
}

func body(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestArmNeedsTheOperatorKey: the control key alone does not arm (403,
// naming wicket node arm); neither does another key's signature, an
// altered signed arming, a replayed one, one with a challenge the node
// never issued, nor one signed before the node restarted. A correctly signed
// arming arms, and the audit trail says the operator key did it.
func TestArmNeedsTheOperatorKey(t *testing.T) {
	vn := startVenueNode(t, func(f *binancefake.Fake) venuerig.Venue { return binanceVenue("bn", "testnet", true, f) })
	ctx := context.Background()
	refused := func(what string, status int, msg, code, words string) {
		t.Helper()
		if status != http.StatusForbidden || !strings.Contains(msg, `"`+code+`"`) || !strings.Contains(msg, words) {
			t.Errorf("%s: %d %s, want 403 %s saying %q", what, status, msg, code, words)
		}
		if v := vn.venue(t, "bn"); v.Armed {
			t.Fatalf("%s armed the venue", what)
		}
	}

	// The control key alone, through the client and raw.
	var ne *node.Error
	if _, err := vn.c.Arm(ctx, "bn", time.Hour, "bn", nil); !errors.As(err, &ne) || ne.Code != "operator_signature_required" ||
		!strings.Contains(ne.Message, "wicket node arm bn") {
		t.Errorf("arming with the control key only: %v", err)
	}
	st, msg := postArm(t, vn.srv, "bn", []byte(`{"for":"1h","confirm":"bn"}`))
	refused("the control key alone", st, msg, "operator_signature_required", "the control key alone does not arm")

	// Another key's signature.
	other := testkit.Key(t)
	st, msg = postArm(t, vn.srv, "bn", body(t, signedArm(t, vn, "bn", time.Hour, other)))
	refused("another key", st, msg, "bad_operator_signature", "not signed by this node's operator key")

	// Altered on the way: signed for 1h, sent for 24h.
	req := signedArm(t, vn, "bn", time.Hour, vn.srv.OperatorKey)
	req.For = (24 * time.Hour).String()
	st, msg = postArm(t, vn.srv, "bn", body(t, req))
	refused("an altered arming", st, msg, "bad_operator_signature", "changed on the way")

	// A challenge the node never issued.
	req = node.ArmRequest{For: "1h0m0s", Confirm: "bn", Challenge: node.NewNonce()}
	req.Signature = node.SignOperator(vn.srv.OperatorKey, req.Statement("bn"))
	st, msg = postArm(t, vn.srv, "bn", body(t, req))
	refused("an unknown challenge", st, msg, "stale_challenge", "wicket node arm bn")

	// Signed correctly: armed, once. The same request again is refused.
	good := body(t, signedArm(t, vn, "bn", time.Hour, vn.srv.OperatorKey))
	if st, msg := postArm(t, vn.srv, "bn", good); st != http.StatusOK || !strings.Contains(msg, `"armed":true`) {
		t.Fatalf("a signed arming: %d %s", st, msg)
	}
	if _, err := vn.c.Disarm(ctx, "bn"); err != nil {
		t.Fatal(err)
	}
	st, msg = postArm(t, vn.srv, "bn", good)
	refused("a replayed arming", st, msg, "stale_challenge", "used already")

	// Signed before the node restarted: its challenge died with the node.
	early := body(t, signedArm(t, vn, "bn", time.Hour, vn.srv.OperatorKey))
	vn.srv.Restart(t)
	vn.c = vn.srv.Client()
	vn.waitSynced(t, "bn")
	st, msg = postArm(t, vn.srv, "bn", early)
	refused("an arming signed before the restart", st, msg, "stale_challenge", "unknown to this node")

	// The client with the operator key arms; the audit trail says so.
	vn.arm(t, "bn", time.Hour)
	page, err := vn.c.Audit(ctx, node.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range page.Entries {
		if e.Arming != nil && e.Arming.Action == node.ArmingArm {
			keys = append(keys, e.KeyID)
		}
	}
	if strings.Join(keys, " ") != "operator operator" {
		t.Errorf("arming entries by %v, want the operator key twice", keys)
	}
}

// TestPaperVenueIssuesNoChallenge: a venue that cannot be armed gets no
// challenge to sign.
func TestPaperVenueIssuesNoChallenge(t *testing.T) {
	vn := startVenueNode(t, func(f *binancefake.Fake) venuerig.Venue { return binanceVenue("bn", "testnet", false, f) })
	for _, v := range []string{"paper", "bn"} {
		if info, err := vn.c.Arming(context.Background(), v); err != nil || info.Challenge != "" || info.Refusal == "" {
			t.Errorf("%s: %+v %v", v, info, err)
		}
	}
}

// TestArmWithoutAnOperatorKey: a node with no operator public key (a
// project made before there was one) arms nothing and says how to make one.
func TestArmWithoutAnOperatorKey(t *testing.T) {
	vn := startVenueNode(t, func(f *binancefake.Fake) venuerig.Venue { return binanceVenue("bn", "testnet", true, f) }, nodetest.WithoutOperatorKey())
	key := testkit.Key(t)
	var ne *node.Error
	if _, err := vn.c.Arm(context.Background(), "bn", time.Hour, "bn", key); !errors.As(err, &ne) || ne.Code != "no_operator_key" ||
		!strings.Contains(ne.Message, "wicket init --operator-key") {
		t.Errorf("arming a node without an operator key: %v", err)
	}
	if v := vn.venue(t, "bn"); v.Armed {
		t.Error("armed without an operator key")
	}
}
