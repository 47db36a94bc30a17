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
	s.checkStreams(now)
	s.checkEnvelopes(now) // the agent's capital envelope (envelope.go)
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
		s.silence(note, cancel, "")
	}()
}

// silence pauses the auto deployments (venue's only, when set) and,
// when cancel, cancels their working orders through the node's own write
// path (by the node's key).
func (s *Server) silence(note string, cancel bool, venue string) {
	paused := s.pauseDeployments(note, true, venue)
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
			if err := s.enqueue(func() { s.apply(id, node.KeyNode, c, command.SanitizeReason(note)) }); err != nil {
				s.tickets.drop(id)
				s.log.Warn("dead man's switch could not cancel", "deployment", d.ID, "client_order_id", cid, "err", err.Message)
			}
		}
	}
	if len(ids) > 0 && venue == "" {
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

// checkStreams is [risk] stream_loss: a real venue whose order stream
// every mark step has found lost for that long gets what the dead man's
// switch does, for that venue alone (once per loss; a stream back ends
// it, the paused deployments staying paused until resumed).
func (s *Server) checkStreams(now time.Time) {
	e, r := s.eng, s.cfg.Project.Risk
	if r.StreamLoss <= 0 {
		return
	}
	for _, name := range e.names {
		rv := e.remotes[name]
		if rv == nil {
			continue
		}
		if rv.connected {
			delete(e.risk.lost, name)
			delete(e.risk.losses, name)
			continue
		}
		since, seen := e.risk.lost[name]
		if !seen {
			e.risk.lost[name] = now
			continue
		}
		if _, tripped := e.risk.losses[name]; tripped || now.Sub(since) < r.StreamLoss {
			continue
		}
		cancel := r.OnSilence == project.OnSilenceCancel
		note := fmt.Sprintf("stream loss: %s's order stream lost since %s (stream_loss %s): its auto deployments paused", name, since.UTC().Format(time.RFC3339), r.StreamLoss)
		if cancel {
			note += " and their working orders canceled"
		}
		e.risk.losses[name] = note
		entry := operatorAudit(now, "stream-"+s.cfg.NewID(), node.KeyNode, node.ArmingStreamLoss, node.Outcome{Status: node.Accepted, Detail: note})
		entry.Arming.Venue = name
		if err := s.commit(&journal.Batch{Audit: []node.AuditEntry{entry}}); err != nil {
			s.log.Error("a stream loss could not be audited; the node acts all the same", "venue", name, "err", err)
		}
		s.log.Warn("venue stream lost too long", "venue", name, "why", note)
		s.wg.Add(1)
		s.silencing.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.silencing.Done()
			s.silence(note, cancel, name)
		}()
	}
}
