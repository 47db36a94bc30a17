package server

import (
	"testing"

	"wicket/node"
)

// TestBracketEntryIsNoExit: a bracket's entry filling is not an exit's
// fill (its exits go live, they are not orphans); an oco's first leg is an
// exit.
func TestBracketEntryIsNoExit(t *testing.T) {
	entry := node.Order{ID: "ord-1", Group: "ord-1", ClientOrderID: "b"}
	bracket := []node.Order{entry, {ID: "ord-2", Group: "ord-1", ClientOrderID: "b" + node.TakeProfitLegSuffix}, {ID: "ord-3", Group: "ord-1", ClientOrderID: "b" + node.StopLegSuffix}}
	if !bracketEntry(entry, bracket) || bracketEntry(bracket[1], bracket) || bracketEntry(bracket[2], bracket) {
		t.Error("a bracket's entry and exits told apart wrongly")
	}
	oco := []node.Order{{ID: "ord-4", Group: "ord-4", ClientOrderID: "o"}, {ID: "ord-5", Group: "ord-4", ClientOrderID: "o" + node.StopLegSuffix}}
	if bracketEntry(oco[0], oco) || bracketEntry(oco[1], oco) {
		t.Error("an oco's leg taken for a bracket's entry")
	}
}
