package node

import (
	"context"
	"encoding/json"
	"net/http"
)

// LedgerHead is the research ledger's head after one append, as the node
// keeps it: a second place, which the agent's process does not write, to
// anchor the ledger in. Its fields are the ledger's anchor line (seq,
// hash, run, rows, time and the ledger key's mark); the node stores them
// as given, in its journal's audit trail, and never deletes one, so a
// tail cut from the ledger and its anchor file together is still named
// by `wicket research verify`.
type LedgerHead struct {
	Seq   int64  `json:"seq"`
	Hash  string `json:"hash"`
	RunID string `json:"run_id"`
	Rows  int    `json:"rows"`
	Time  string `json:"time"`
	MAC   string `json:"mac,omitempty"`
}

// ArmingLedgerHead is the audit entry of a research ledger head the node
// keeps (LedgerHead): no venue's arming, kept in the audit trail so the
// journal's anchor covers it; the audit pages leave it out.
const ArmingLedgerHead ArmingAction = "ledger_head"

// LedgerHeadsPath is where the node takes (POST, control key) and gives
// (GET) research ledger heads.
const LedgerHeadsPath = "/v1/ledger/heads"

// AnchorLedger has the node keep h.
func (c *Client) AnchorLedger(ctx context.Context, h LedgerHead) error {
	body, err := json.Marshal(h)
	if err != nil {
		return err
	}
	var out struct{}
	return c.do(ctx, http.MethodPost, LedgerHeadsPath, nil, body, KeyControl, &out)
}

// LedgerHeads is every research ledger head the node keeps, oldest first.
func (c *Client) LedgerHeads(ctx context.Context) ([]LedgerHead, error) {
	var out struct {
		Heads []LedgerHead `json:"heads"`
	}
	err := c.do(ctx, http.MethodGet, LedgerHeadsPath, nil, nil, KeyObserve, &out)
	return out.Heads, err
}
