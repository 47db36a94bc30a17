package server

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"wicket/internal/project"
	"wicket/node"
	"wicket/node/command"
	"wicket/node/journal"
)

// The dead man's switch ([risk] heartbeat): unless an operator's
// heartbeat (POST /v1/heartbeat, signed by the operator key: wicket node
// heartbeat) arrives within the heartbeat, the node pauses every auto
// deployment at its next mark step and, with on_silence = "cancel",
// cancels their working orders. It says so in the snapshot, the risk
// status, the audit trail (by the node) and the log. A heartbeat re-arms
// the switch; the paused deployments stay paused until an operator
// resumes each. The clock starts at the node's start.

// heartbeat is the switch's state (the engine's, on the fold).
type heartbeat struct {
	last   time.Time
	lapsed bool
	note   string
}

// state is the switch as the snapshot shows it; nil when not configured.
func (h heartbeat) state(cfg project.Risk, now time.Time) *node.HeartbeatState {
	if cfg.Heartbeat <= 0 {
		return nil
	}
	return &node.HeartbeatState{Every: cfg.Heartbeat.String(), OnSilence: cfg.OnSilence, Last: h.last, Due: h.last.Add(cfg.Heartbeat), Lapsed: h.lapsed, Note: h.note}
}

// checkHeartbeat trips the switch when the heartbeat is overdue at now
// (on the fold; the pausing and cancels run off it).
func (s *Server) checkHeartbeat(now time.Time) {
	e, r := s.eng, s.cfg.Project.Risk
	if r.Heartbeat <= 0 || e.risk.beat.lapsed || now.Sub(e.risk.beat.last) < r.Heartbeat {
		return
	}
	cancel := r.OnSilence == project.OnSilenceCancel
	note := fmt.Sprintf("dead man's switch: no operator heartbeat since %s (heartbeat %s): auto deployments paused",
		e.risk.beat.last.UTC().Format(time.RFC3339), r.Heartbeat)
	if cancel {
		note += " and their working orders canceled"
	}
	note += "; wicket node heartbeat re-arms it, wicket node resume DEPLOYMENT resumes each"
	e.risk.beat.lapsed, e.risk.beat.note = true, note
	entry := operatorAudit(now, "silence-"+s.cfg.NewID(), node.KeyNode, node.ArmingSilence, node.Outcome{Status: node.Accepted, Detail: note})
	if err := s.commit(&journal.Batch{Audit: []node.AuditEntry{entry}}); err != nil {
		s.log.Error("the dead man's switch could not be audited; it acts all the same", "err", err)
	}
	s.log.Warn("dead man's switch tripped", "why", note)
	s.wg.Add(1)
	s.silencing.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.silencing.Done()
		s.silence(note, cancel)
	}()
}

// silence pauses the auto deployments and, when cancel, cancels their
// working orders through the node's own write path (by the node's key).
func (s *Server) silence(note string, cancel bool) {
	paused := s.pauseDeployments(note, true)
	var ids []string
	for _, d := range paused {
		ids = append(ids, d.ID)
		if !cancel {
			continue
		}
		for _, cid := range d.Working {
			c := command.Command{Verb: command.CancelOrder, Venue: d.Venue, ClientOrderID: cid}
			id := "tk-" + s.cfg.NewID()
			s.tickets.open(id)
			if err := s.enqueue(func() { s.apply(id, node.KeyNode, c, "dead man's switch: deployment "+d.ID+" paused") }); err != nil {
				s.tickets.drop(id)
				s.log.Warn("dead man's switch could not cancel", "deployment", d.ID, "client_order_id", cid, "err", err.Message)
			}
		}
	}
	if len(ids) > 0 {
		s.onFold(func() { s.eng.risk.beat.note += "; paused: " + strings.Join(ids, ", ") })
	}
}

// heartbeatPost is the operator's heartbeat.
func (s *Server) heartbeatPost(w http.ResponseWriter, r *http.Request) {
	req, berr := readOperator(r)
	if berr != nil {
		writeError(w, berr)
		return
	}
	var st *node.HeartbeatState
	var ierr *node.Error
	derr := s.do(r.Context(), func() {
		now := s.cfg.Now()
		if s.cfg.Project.Risk.Heartbeat <= 0 {
			ierr = node.Errorf(node.KindRejected, "no_heartbeat", "this node has no dead man's switch: set [risk] heartbeat in wicket.toml (for example \"15m\") and restart it")
			return
		}
		if ierr = s.operatorRisk(node.ActHeartbeat, req, now); ierr != nil {
			return
		}
		b := &s.eng.risk.beat
		if b.lapsed {
			b.note = "re-armed by an operator's heartbeat after: " + b.note
		} else {
			b.note = ""
		}
		b.last, b.lapsed = now, false
		s.log.Info("operator heartbeat", "next_due", now.Add(s.cfg.Project.Risk.Heartbeat).UTC().Format(time.RFC3339))
		st = b.state(s.cfg.Project.Risk, now)
	})
	if derr == nil {
		derr = ierr
	}
	if derr != nil {
		writeError(w, derr)
		return
	}
	writeJSON(w, http.StatusOK, st)
}
