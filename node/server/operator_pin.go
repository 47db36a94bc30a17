package server

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"wicket/node"
	"wicket/node/journal"
)

// The operator key's pin. At its first start with an operator key the
// node pins that key's public half in its journal; at every later start a
// different settings/operator.pub is refused, so a process that can write
// settings/ but does not hold the operator key cannot put its own key in
// and arm a venue with it. The pin changes only by RotateOperatorKey, with
// the node stopped: signed by the pinned (old) key, or confirmed at a
// terminal by typing the new key's fingerprint back; either is recorded
// in the audit trail. (The first pin is logged, not audited: it changes
// nothing the audit trail has recorded.)

// Fingerprint is the short form of an operator public key people compare
// and type: the first 10 bytes of its SHA-256, in five groups of four hex
// digits.
func Fingerprint(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	h := hex.EncodeToString(sum[:10])
	return strings.Join([]string{h[0:4], h[4:8], h[8:12], h[12:16], h[16:20]}, "-")
}

// sameFingerprint compares a typed fingerprint with want, ignoring case,
// spaces and dashes.
func sameFingerprint(typed, want string) bool {
	norm := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == ' ' || r == '-' || r == '\t' {
				return -1
			}
			return r
		}, strings.ToLower(strings.TrimSpace(s)))
	}
	return norm(typed) != "" && norm(typed) == norm(want)
}

// rotationDomain prefixes the signed rotation, so no other signed text of
// wicket's can pass for one.
const rotationDomain = "wicket operator key rotation v1\n"

// RotationMessage is what the old operator key signs to hand the node over
// to the new one: both keys and the journal's command number it was signed
// at, so a signature serves one rotation of one journal once.
func RotationMessage(old, new ed25519.PublicKey, at int64) []byte {
	return []byte(rotationDomain + hex.EncodeToString(old) + "\n" + hex.EncodeToString(new) + "\n" + strconv.FormatInt(at, 10))
}

// Rotation is a change of the node's operator key to New. Sign (holding
// the old private key) signs RotationMessage; without it, Confirm is asked
// at a terminal for the new key's fingerprint, shown both fingerprints.
type Rotation struct {
	New     ed25519.PublicKey
	Sign    func(msg []byte) []byte
	Confirm func(oldPrint, newPrint string) (typed string, err error)
	Now     time.Time
}

// ErrNothingPinned is returned by RotateOperatorKey on a journal that pins
// no operator key: the next start pins the key it finds.
var ErrNothingPinned = errors.New("the journal pins no operator key yet: the node pins settings/operator.pub at its next start")

// RotateOperatorKey moves the operator key pinned in the journal at path
// to r.New. The node must be stopped (the journal is locked while it
// runs). It returns the old key.
func RotateOperatorKey(path string, r Rotation) (ed25519.PublicKey, error) {
	if len(r.New) != ed25519.PublicKeySize {
		return nil, errors.New("rotate operator key: the new key is not an Ed25519 public key")
	}
	j, err := journal.Open(path)
	if err != nil {
		return nil, fmt.Errorf("rotate operator key: %w (stop wicket node serve first: the journal is locked while it runs)", err)
	}
	defer j.Close()
	old, err := j.OperatorKey()
	switch {
	case err != nil:
		return nil, err
	case old == nil:
		return nil, ErrNothingPinned
	case old.Equal(r.New):
		return old, nil
	}
	oldPrint, newPrint := Fingerprint(old), Fingerprint(r.New)
	var how string
	switch {
	case r.Sign != nil:
		msg := RotationMessage(old, r.New, j.Commands())
		if !ed25519.Verify(old, msg, r.Sign(msg)) {
			return nil, fmt.Errorf("rotate operator key: the old key given did not sign it: the journal pins the key %s, so sign with that one, or leave the old key out and confirm at a terminal", oldPrint)
		}
		how = "signed by the old operator key"
	case r.Confirm != nil:
		typed, err := r.Confirm(oldPrint, newPrint)
		if err != nil {
			return nil, err
		}
		if !sameFingerprint(typed, newPrint) {
			return nil, fmt.Errorf("rotate operator key: %q is not the new key's fingerprint %s; the pin is unchanged", typed, newPrint)
		}
		how = "confirmed at a terminal by typing the new key's fingerprint"
	default:
		return nil, errors.New("rotate operator key: neither the old key's signature nor a terminal confirmation")
	}
	note := fmt.Sprintf("operator key changed from %s to %s, %s", oldPrint, newPrint, how)
	if err := j.PinOperatorKey(r.New, pinEntry(r.Now, node.KeyOperator, note)); err != nil {
		return nil, err
	}
	return old, nil
}

// pinEntry is the audit trail's record of a pin change.
func pinEntry(now time.Time, keyID, note string) *node.AuditEntry {
	id := "operator-key-" + node.NewNonce()[:12]
	return &node.AuditEntry{Time: now, Ticket: id, KeyID: keyID,
		Arming:  &node.ArmingChange{Action: node.ArmingOperatorKey, Note: note},
		Outcome: node.Outcome{Ticket: id, Status: node.Accepted, Detail: note, Time: now}}
}

// checkOperatorPin pins cfg.OperatorKey at a journal's first start with
// one, and refuses a key other than the pinned one.
func checkOperatorPin(j *journal.Journal, cfg Config) error {
	if len(cfg.OperatorKey) == 0 {
		return nil // the node arms nothing; the pin stays for when the key is back
	}
	pinned, err := j.OperatorKey()
	switch {
	case err != nil:
		return err
	case pinned == nil:
		// The first pin is no change: the log says it, the audit trail
		// records rotations.
		if err := j.PinOperatorKey(cfg.OperatorKey, nil); err != nil {
			return err
		}
		cfg.Logger.Info("operator key pinned", "fingerprint", Fingerprint(cfg.OperatorKey))
		return nil
	case !pinned.Equal(cfg.OperatorKey):
		return fmt.Errorf("node: settings/operator.pub (fingerprint %s) is not the operator key this node's journal pinned (%s), so the node does not start: "+
			"put the operator's public key back; or, if the operator changed keys, run `wicket node rotate-operator-key` with the node stopped "+
			"(signed with the old key via --old-key, or confirmed at a terminal), then start the node again",
			Fingerprint(cfg.OperatorKey), Fingerprint(pinned))
	}
	return nil
}
