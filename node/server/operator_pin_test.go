package server_test

import (
	"crypto/ed25519"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/internal/testkit"
	"wicket/node"
	"wicket/node/journal"
	"wicket/node/server"
)

// startPinned starts and stops a node on the journal at path with operator
// public key pub, returning New's error.
func startPinned(t *testing.T, path string, pub ed25519.PublicKey) error {
	t.Helper()
	s, err := server.New(server.Config{Project: project.Defaults(), JournalPath: path,
		ObserveKey: testkit.Secret(t, 32), ControlKey: testkit.Secret(t, 32), OperatorKey: pub})
	if err != nil {
		return err
	}
	s.Close()
	return nil
}

// operatorAudit is the operator-key entries of the journal at path.
func operatorAudit(t *testing.T, path string) []string {
	t.Helper()
	j, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	page, err := j.Audit(node.AuditQuery{Limit: journal.MaxAuditLimit})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range page.Entries {
		if e.Arming != nil && e.Arming.Action == node.ArmingOperatorKey {
			out = append(out, e.KeyID+": "+e.Arming.Note)
		}
	}
	return out
}

// TestOperatorKeySwapIsRefused is issue 44's item 3: a same-user process
// that replaced settings/operator.pub (operator.key deleted) and restarted
// the node could arm with its own key. The node pins the key at its first
// start and refuses another until a rotation signed by the old key, or
// confirmed at a terminal, is recorded.
func TestOperatorKeySwapIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.db")
	old, intruder, next := testkit.Key(t), testkit.Key(t), testkit.Key(t)
	pub := func(k ed25519.PrivateKey) ed25519.PublicKey { return k.Public().(ed25519.PublicKey) }
	if err := startPinned(t, path, pub(old)); err != nil {
		t.Fatal(err)
	}
	err := startPinned(t, path, pub(intruder))
	if err == nil || !strings.Contains(err.Error(), "rotate-operator-key") || !strings.Contains(err.Error(), server.Fingerprint(pub(old))) {
		t.Fatalf("a swapped operator.pub starts the node (err %v); want a refusal naming the pinned key and the rotation", err)
	}
	// The intruder cannot sign the rotation with its own key.
	_, err = server.RotateOperatorKey(path, server.Rotation{New: pub(intruder), Now: time.Now(),
		Sign: func(m []byte) []byte { return ed25519.Sign(intruder, m) }})
	if err == nil {
		t.Fatal("a rotation signed by a key other than the pinned one was accepted")
	}
	// Nor by replaying a signature of another rotation (another journal level).
	stale := ed25519.Sign(old, server.RotationMessage(pub(old), pub(intruder), 999))
	if _, err = server.RotateOperatorKey(path, server.Rotation{New: pub(intruder), Now: time.Now(),
		Sign: func([]byte) []byte { return stale }}); err == nil {
		t.Fatal("a rotation signature made for another journal level was accepted")
	}
	// A fingerprint typed wrong at the terminal changes nothing.
	_, err = server.RotateOperatorKey(path, server.Rotation{New: pub(intruder), Now: time.Now(),
		Confirm: func(_, _ string) (string, error) { return server.Fingerprint(pub(old)), nil }})
	if err == nil {
		t.Fatal("a rotation confirmed with the wrong fingerprint was accepted")
	}
	if err := startPinned(t, path, pub(intruder)); err == nil {
		t.Fatal("failed rotations changed the pin")
	}
	// The old key signs the rotation to next: the node starts with next.
	if _, err := server.RotateOperatorKey(path, server.Rotation{New: pub(next), Now: time.Now(),
		Sign: func(m []byte) []byte { return ed25519.Sign(old, m) }}); err != nil {
		t.Fatal(err)
	}
	if err := startPinned(t, path, pub(next)); err != nil {
		t.Fatalf("after a signed rotation: %v", err)
	}
	if err := startPinned(t, path, pub(old)); err == nil {
		t.Fatal("the old key still starts the node after the rotation")
	}
	// Confirmed at a terminal by typing the printed fingerprint back.
	var shown string
	if _, err := server.RotateOperatorKey(path, server.Rotation{New: pub(old), Now: time.Now(),
		Confirm: func(_, p string) (string, error) { shown = p; return strings.ToUpper(p), nil }}); err != nil {
		t.Fatal(err)
	}
	if shown != server.Fingerprint(pub(old)) {
		t.Errorf("the terminal was shown %q, want the new key's fingerprint", shown)
	}
	if err := startPinned(t, path, pub(old)); err != nil {
		t.Fatalf("after a confirmed rotation: %v", err)
	}
	got := operatorAudit(t, path)
	if len(got) != 2 || !strings.HasPrefix(got[0], "operator: operator key changed from "+server.Fingerprint(pub(old))) ||
		!strings.Contains(got[0], "signed by the old operator key") || !strings.Contains(got[1], "confirmed at a terminal") {
		t.Errorf("audit trail of the operator key: %q", got)
	}
	// A journal that pins nothing has nothing to rotate.
	if _, err := server.RotateOperatorKey(filepath.Join(t.TempDir(), "fresh.db"), server.Rotation{New: pub(next), Now: time.Now(),
		Sign: func(m []byte) []byte { return ed25519.Sign(old, m) }}); !errors.Is(err, server.ErrNothingPinned) {
		t.Errorf("rotation on a fresh journal: %v", err)
	}
}
