package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"wicket/internal/project"
	"wicket/node"

	"github.com/mark3labs/mcp-go/mcp"
)

// maxSnapshotDeployments bounds the deployments node_snapshot lists.
const maxSnapshotDeployments = 50

// deploymentRow is one deployment as node_snapshot lists it.
type deploymentRow struct {
	ID       string `json:"id"`
	Strategy string `json:"strategy"`
	Series   string `json:"series"`
	Venue    string `json:"venue"`
	Mode     string `json:"mode"`
	State    string `json:"state"`
	Reason   string `json:"reason,omitempty"`
}

// snapshotAnswer is node_snapshot's answer: the node's snapshot and its
// deployments (absent when the node runs none; deployments_note says why
// they could not be read, or that the list was cut to
// maxSnapshotDeployments).
type snapshotAnswer struct {
	*node.Snapshot
	Deployments     []deploymentRow `json:"deployments,omitempty"`
	DeploymentsNote string          `json:"deployments_note,omitempty"`
}

// withDeployments adds the node's deployments to snap.
func (tb *toolbox) withDeployments(ctx context.Context, snap *node.Snapshot) snapshotAnswer {
	out := snapshotAnswer{Snapshot: snap}
	dn, ok := tb.Node.(deploymentsNode)
	if !ok {
		return out
	}
	var list struct {
		Deployments []deploymentRow `json:"deployments"`
	}
	err := dn.DeploymentsGet(ctx, "", nil, &list)
	var ne *node.Error
	switch {
	case errors.As(err, &ne) && ne.Code == "deployments_off":
		return out // this node runs no deployments
	case err != nil:
		out.DeploymentsNote = "cannot read the node's deployments: " + err.Error()
		return out
	}
	out.Deployments = list.Deployments
	if total := len(out.Deployments); total > maxSnapshotDeployments {
		out.Deployments = out.Deployments[:maxSnapshotDeployments]
		out.DeploymentsNote = fmt.Sprintf("the first %d of %d; read wicket://deployments/{id} for one", maxSnapshotDeployments, total)
	}
	return out
}

// snapshotOutput is node_snapshot's outputSchema: the snapshot's, with
// the deployments.
var snapshotOutput = func() map[string]any {
	s := maps.Clone(snapshotSchema)
	props := maps.Clone(s["properties"].(map[string]any))
	props["deployments"] = map[string]any{"type": "array"}
	props["deployments_note"] = map[string]any{"type": "string"}
	s["properties"] = props
	return s
}()

// uriDeploymentTemplate is one deployment on the node.
const uriDeploymentTemplate = "wicket://deployments/{id}"

// addDeploymentTemplate registers wicket://deployments/{id} (the
// deployment with its recent decisions and intents, as the node answers
// it) where deployment_report is served.
func (s *Server) addDeploymentTemplate() {
	if !s.Access().Served("deployment_report") || !hasNode(s.tb) {
		return
	}
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(uriDeploymentTemplate, "deployment",
		mcp.WithTemplateTitle("A deployment"),
		mcp.WithTemplateDescription("One deployment on the node: its request, state, figures and recent decisions and intents."),
		mcp.WithTemplateMIMEType("application/json")),
		func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			id := templateArg(req, "id")
			if err := project.ValidName("deployment id", id); err != nil {
				return nil, badResourceURI(err)
			}
			if r := s.tb.needDeployments(); r != nil {
				return nil, r.cause
			}
			var detail json.RawMessage
			err := s.tb.deployNode().DeploymentsGet(ctx, "/"+url.PathEscape(id), nil, &detail)
			var ne *node.Error
			if errors.As(err, &ne) && ne.Kind == node.KindNotFound {
				return nil, missing(fmt.Errorf("no deployment %q on the node; node_snapshot lists them", id))
			}
			if err != nil {
				return nil, err
			}
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: requestedURI(req), MIMEType: "application/json", Text: string(detail)}}, nil
		})
}
