package server_test

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"wicket/internal/project"
	"wicket/node/command"
	"wicket/node/nodetest"
	"wicket/node/server"
)

// TestJournalStartIsLogged: the node's log says whether it started a new
// journal or recovered one, and how much it recovered.
func TestJournalStartIsLogged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.db")
	start := func() string {
		var log bytes.Buffer
		s, err := server.New(server.Config{Project: project.Defaults(), JournalPath: path,
			ObserveKey: strings.Repeat("o", 32), ControlKey: strings.Repeat("c", 32),
			Logger: slog.New(slog.NewTextHandler(&log, nil))})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		return log.String()
	}
	if got := start(); !strings.Contains(got, `msg="new journal"`) || strings.Contains(got, "recovered") {
		t.Errorf("first start logs %q, want a new journal", got)
	}
	srv := nodetest.NewServer(t, nodetest.WithJournal(path))
	accepted(t, srv.Client(), order("paper", "BTC-USD", command.Buy, command.Market, "0.1", ""))
	srv.Close()
	if got := start(); !strings.Contains(got, `msg="recovered 1 command, last at `) || strings.Contains(got, "new journal") {
		t.Errorf("restart logs %q, want the recovered command", got)
	}
}
