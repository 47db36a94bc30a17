package server

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"wicket/node"
	"wicket/node/alert"
	"wicket/node/journal"
)

// Alerts: the node tells Config.Alerts every audit entry it commits, and
// the table in package alert decides which are alerts (a breaker trip, a
// kill, a dead man's switch, a statement mismatch). A lost venue stream
// is logged, not audited, so it is raised here directly, at most once per
// venue per streamLostEvery. GET /v1/alerts serves the recent alerts to
// the MCP servers' node watch, which puts them on their listen streams.

// streamLostEvery bounds the stream-lost alerts of a flapping stream.
const streamLostEvery = 5 * time.Minute

// alertCommitted raises the alerts of b's audit entries (on the fold,
// after the commit; Raise never blocks).
func (s *Server) alertCommitted(b *journal.Batch) {
	if s.cfg.Alerts == nil {
		return
	}
	if b.Entry != nil {
		s.cfg.Alerts.Audit(*b.Entry)
	}
	s.cfg.Alerts.Audit(b.Audit...)
}

// alertStreamLost raises venue's stream loss.
func (s *Server) alertStreamLost(venue string, err error) {
	if s.cfg.Alerts == nil {
		return
	}
	now := s.cfg.Now()
	text := fmt.Sprintf("venue %s: its order stream is down (%v); the node reconnects and reads its working orders over REST meanwhile", venue, err)
	if err == nil {
		text = fmt.Sprintf("venue %s: its order stream is down; the node reconnects and reads its working orders over REST meanwhile", venue)
	}
	id := fmt.Sprintf("stream-lost-%s-%d", venue, now.Unix()/int64(streamLostEvery/time.Second))
	if a, aerr := alert.New(alert.StreamLost, id, now, venue, text); aerr == nil {
		s.cfg.Alerts.Raise(a)
	}
}

// mountAlerts mounts GET /v1/alerts and GET /v1/statement (statement.go).
func (s *Server) mountAlerts(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/alerts", s.alertsGet)
	mux.HandleFunc("GET /v1/statement", s.statementGet)
}

func (s *Server) alertsGet(w http.ResponseWriter, r *http.Request) {
	var after int64
	if v := r.URL.Query().Get("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(w, node.Errorf(node.KindBadRequest, "bad_after", "after=%q: give the next count of an earlier answer", short(v)))
			return
		}
		after = n
	}
	list, next := s.cfg.Alerts.Recent(after)
	if list == nil {
		list = []alert.Alert{}
	}
	writeJSON(w, http.StatusOK, node.AlertPage{Alerts: list, Next: next})
}
