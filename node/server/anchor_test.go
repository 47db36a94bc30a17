package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wicket/internal/project"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/node/server"
)

// TestNodeRefusesAJournalBehindItsAnchor: a node whose journal was
// replaced by an older copy refuses to start, saying what happened and
// what to do, rather than forget the orders the copy lacks.
func TestNodeRefusesAJournalBehindItsAnchor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.db")
	srv := nodetest.NewServer(t, nodetest.WithJournal(path))
	accepted(t, srv.Client(), order("paper", "BTC-USD", command.Buy, command.Market, "0.1", ""))
	srv.Close()
	older, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	srv = nodetest.NewServer(t, nodetest.WithJournal(path))
	accepted(t, srv.Client(), order("paper", "BTC-USD", command.Sell, command.Market, "0.1", ""))
	srv.Close()
	if err := os.WriteFile(path, older, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = server.New(server.Config{Project: project.Defaults(), JournalPath: path,
		ObserveKey: strings.Repeat("o", 32), ControlKey: strings.Repeat("c", 32)})
	if err == nil {
		t.Fatal("a node started on a journal behind its anchor")
	}
	for _, want := range []string{path, "behind its anchor", "acknowledged orders are missing", "move " + path + ".anchor aside"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
}
