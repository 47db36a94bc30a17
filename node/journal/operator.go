package journal

import (
	"crypto/ed25519"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"wicket/node"
)

// The operator key's pin: the journal holds the public half of the
// operator key the node first started with (meta key operator_key), so a
// settings/operator.pub swapped behind the node's back is told from the
// one it pinned. Only package server decides what may change it; the
// journal stores the pin and the audit entry of each change together.

// operatorKeyMeta is the meta row holding the pinned key, in hex.
const operatorKeyMeta = "operator_key"

// OperatorKey returns the pinned operator public key; nil when none is
// pinned yet.
func (j *Journal) OperatorKey() (ed25519.PublicKey, error) {
	var v string
	err := j.w.QueryRow(`SELECT value FROM meta WHERE key = ?`, operatorKeyMeta).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal: read the pinned operator key: %w", err)
	}
	b, err := hex.DecodeString(v)
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("journal: the pinned operator key is not an Ed25519 public key (%d characters); the journal was edited by hand", len(v))
	}
	return ed25519.PublicKey(b), nil
}

// PinOperatorKey pins pub as the operator key and, when e is not nil,
// records it (an arming entry saying why) in the audit trail, in one
// transaction, after whatever was appended before it.
func (j *Journal) PinOperatorKey(pub ed25519.PublicKey, e *node.AuditEntry) error {
	if len(pub) != ed25519.PublicKeySize {
		return errors.New("journal: an operator key to pin must be an Ed25519 public key")
	}
	return j.Commit(pinBatch(pub, e))
}

// ledgerHeadVerb is the verb column of a research ledger head's entry.
const ledgerHeadVerb = armingVerb + string(node.ArmingLedgerHead)

// LedgerHeads reads every research ledger head the journal keeps, oldest
// first: the reason column of their entries.
func (j *Journal) LedgerHeads() ([]node.LedgerHead, error) {
	rows, err := j.r.Query(`SELECT seq, reason FROM commands WHERE verb = ? ORDER BY seq`, ledgerHeadVerb)
	if err != nil {
		return nil, fmt.Errorf("journal: ledger heads: %w", err)
	}
	defer rows.Close()
	out := []node.LedgerHead{}
	for rows.Next() {
		var seq int64
		var text string
		if err := rows.Scan(&seq, &text); err != nil {
			return nil, fmt.Errorf("journal: ledger heads: %w", err)
		}
		var h node.LedgerHead
		if err := json.Unmarshal([]byte(text), &h); err != nil {
			return nil, fmt.Errorf("journal: ledger head in entry %d is unreadable: %w", seq, err)
		}
		out = append(out, h)
	}
	return out, rows.Err()
}
