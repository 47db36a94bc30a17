package server

import (
	"net/http"

	"wicket/node"
)

// mountDeployments mounts Config.Deployments (package deploy's surface,
// wired by cmd/wicket) at /v1/deployments behind the node's
// authentication: the observe key reads, only the control key writes, and
// the operator's acts carry the operator key's signature, which the
// handler checks. Without it the endpoints say the node runs none.
func (s *Server) mountDeployments(mux *http.ServeMux) {
	h := s.cfg.Deployments
	if h == nil {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			writeError(w, nodeErrorNoDeployments)
		})
	}
	mux.Handle("/v1/deployments", s.agentDeployments(h)) // envelope.go: the agent's deployments
	mux.Handle("/v1/deployments/", h)
}

var nodeErrorNoDeployments = node.Errorf(node.KindNotFound, "deployments_off",
	"this node runs no deployments: wicket node serve runs them when the project has strategies")

// DeploymentPauser is what the kill switch and the dead man's switch need
// of Config.Deployments (package deploy's Handler has it): pause every
// running deployment (only the auto ones when autoOnly; only venue's
// when venue is set), journaled with why, and list those paused with
// their working orders. It is called off the fold, since a deployment
// may be waiting on the node.
type DeploymentPauser interface {
	PauseDeployments(why string, autoOnly bool, venue string) []node.PausedDeployment
}
