package main

import (
	"context"
	"sync/atomic"
	"time"

	"wicket/internal/project"
	"wicket/node"
	"wicket/strategy/ledger"
)

// The research ledger's second anchor: each append's anchor is also kept
// by the project's node (wicket.toml [node] address), in its journal,
// which the agent's process does not write; `wicket research verify`
// reads them back, so a tail cut from the ledger and its anchor file
// together, or both rolled back, is named. Best effort when recording: a
// node that is not running is tried once per process and left alone
// after that, and verify notes the rows it does not hold.

// witnessTimeout bounds one call to the node about the ledger.
const witnessTimeout = 2 * time.Second

// nodeWitness keeps ledger anchors in the node's journal.
type nodeWitness struct {
	c    *node.Client
	down atomic.Bool // a call failed: not tried again by this process
}

func (w *nodeWitness) Keep(ctx context.Context, a ledger.Anchor) error {
	if w.down.Load() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), witnessTimeout)
	defer cancel()
	err := w.c.AnchorLedger(ctx, node.LedgerHead(a))
	if err != nil {
		w.down.Store(true)
	}
	return err
}

// ledgerNode is the client of the project's node for the ledger's
// anchors, nil when the project has no node keys.
func ledgerNode(p project.Project) (*node.Client, string) {
	cfg, err := p.Config()
	if err != nil || cfg.Node.Address == "" {
		return nil, ""
	}
	c, err := nodeClient(cfg.Node.Address, &p)
	if err != nil {
		return nil, ""
	}
	return c, cfg.Node.Address
}

// ledgerWitness is the witness of the project's ledger, nil without a node.
func ledgerWitness(p project.Project) ledger.Witness {
	if c, _ := ledgerNode(p); c != nil {
		return &nodeWitness{c: c}
	}
	return nil
}

// ledgerHeld reads the anchors the project's node keeps; Source empty
// without a node.
func ledgerHeld(ctx context.Context, p project.Project) ledger.Held {
	c, addr := ledgerNode(p)
	if c == nil {
		return ledger.Held{}
	}
	held := ledger.Held{Source: "the node's journal at " + addr}
	ctx, cancel := context.WithTimeout(ctx, witnessTimeout)
	defer cancel()
	heads, err := c.LedgerHeads(ctx)
	if err != nil {
		held.Err = err
		return held
	}
	for _, h := range heads {
		held.Anchors = append(held.Anchors, ledger.Anchor(h))
	}
	return held
}
