package server

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"wicket/node"
	"wicket/node/journal"
)

// Research ledger heads (node.LedgerHead): the node keeps each one the
// agent's process or a CLI sends, as an entry of its audit trail, so the
// journal's keyed anchor covers them, and gives them back to `wicket
// research verify`. It checks their form, not their truth: it holds no
// ledger key. It never deletes or changes one.

// maxRunID bounds a ledger head's run id.
const maxRunID = 128

func (s *Server) ledgerHeadPost(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var h node.LedgerHead
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		writeError(w, node.Errorf(node.KindBadRequest, "bad_request", "ledger head: %v (fields: seq, hash, run_id, rows, time, mac)", err))
		return
	}
	if why := checkLedgerHead(h); why != "" {
		writeError(w, node.Errorf(node.KindBadRequest, "bad_ledger_head", "ledger head: %s", why))
		return
	}
	keyID, _ := r.Context().Value(keyIDContext{}).(string)
	text, _ := json.Marshal(h)
	var cerr error
	derr := s.do(r.Context(), func() {
		now := s.cfg.Now()
		id := fmt.Sprintf("ledger-%d-%s", h.Seq, node.NewNonce()[:8])
		note := fmt.Sprintf("research ledger row %d (run %q, %d rows)", h.Seq, h.RunID, h.Rows)
		cerr = s.commit(&journal.Batch{Audit: []node.AuditEntry{{Time: now, Ticket: id, KeyID: keyID, Reason: string(text),
			Arming:  &node.ArmingChange{Action: node.ArmingLedgerHead, Note: note},
			Outcome: node.Outcome{Ticket: id, Status: node.Accepted, Detail: note, Time: now}}}})
	})
	switch {
	case derr != nil:
		writeError(w, derr)
	case cerr != nil:
		writeError(w, node.Errorf(node.KindUnavailable, "journal", "the journal could not keep the ledger head: %v", cerr))
	default:
		writeJSON(w, http.StatusOK, map[string]bool{"kept": true})
	}
}

func (s *Server) ledgerHeadsGet(w http.ResponseWriter, _ *http.Request) {
	heads, err := s.j.LedgerHeads()
	if err != nil {
		writeError(w, node.Errorf(node.KindInternal, "journal", "%v", err))
		return
	}
	writeJSON(w, http.StatusOK, map[string][]node.LedgerHead{"heads": heads})
}

// checkLedgerHead is what is wrong with h's form, "" when nothing.
func checkLedgerHead(h node.LedgerHead) string {
	hexOf := func(s string) bool { b, err := hex.DecodeString(s); return err == nil && len(b) == 32 }
	switch {
	case h.Seq < 1:
		return "seq must be a row number (1 or more)"
	case !hexOf(h.Hash):
		return "hash must be 64 hex digits"
	case h.MAC != "" && !hexOf(h.MAC):
		return "mac must be 64 hex digits"
	case h.Rows < 1:
		return "rows must be 1 or more"
	case len(h.RunID) == 0 || len(h.RunID) > maxRunID || len(h.Time) > 64:
		return fmt.Sprintf("run_id must be 1 to %d characters, time at most 64", maxRunID)
	}
	return ""
}
