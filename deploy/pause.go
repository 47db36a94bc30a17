package deploy

import (
	"sort"

	"wicket/node"
)

// PauseDeployments pauses every running deployment (only the auto ones
// when autoOnly; only those on venue when it is set) with why, journaled, its waiting proposals lapsed; only
// an operator resumes each (wicket node resume). It lists those paused
// with the client order ids of their orders still pending at the node.
// The node's kill switch and dead man's switch call it (through
// server.DeploymentPauser); before the runner is attached it pauses none.
func (h *Handler) PauseDeployments(why string, autoOnly bool, venue string) []node.PausedDeployment {
	r := h.r.Load()
	if r == nil {
		return nil
	}
	return r.PauseAll(why, autoOnly, venue)
}

// PauseAll is PauseDeployments on the runner.
func (r *Runner) PauseAll(why string, autoOnly bool, venue string) []node.PausedDeployment {
	r.mu.Lock()
	ls := make([]*live, 0, len(r.deps))
	for _, l := range r.deps {
		ls = append(ls, l)
	}
	r.mu.Unlock()
	var out []node.PausedDeployment
	for _, l := range ls {
		l.mu.Lock()
		d := l.d
		if d.State != StateRunning || (autoOnly && d.Mode != ModeAuto) || (venue != "" && d.Venue != venue) {
			l.mu.Unlock()
			continue
		}
		prev := *d
		r.pause(d, why, r.cfg.Now().UTC())
		lapsed := r.lapseProposals(d, "lapsed: the deployment was paused ("+why+")")
		if err := r.cfg.Store.Commit(Batch{Deployment: d, Intents: lapsed}); err != nil {
			*d = prev
			l.mu.Unlock()
			r.log.Error("a deployment could not be paused: its pause could not be journaled", "deployment", prev.ID, "err", err)
			continue
		}
		p := node.PausedDeployment{ID: d.ID, Venue: d.Venue}
		if open, err := r.cfg.Store.OpenIntents(d.ID); err == nil {
			for _, in := range open {
				if in.Status == IntentPending {
					p.Working = append(p.Working, in.ClientOrderID)
				}
			}
		}
		l.mu.Unlock()
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
