package node

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
)

// The node's deployments (package deploy, mounted at /v1/deployments when
// the node runs them) are read and written through these two calls; the
// request and answer types are deploy's, which node does not import.

// DeploymentsGet reads /v1/deployments+sub with query q (observe key)
// into out.
func (c *Client) DeploymentsGet(ctx context.Context, sub string, q url.Values, out any) error {
	return c.do(ctx, http.MethodGet, "/v1/deployments"+sub, q, nil, KeyObserve, out)
}

// DeploymentsPost sends body as JSON to /v1/deployments+sub (control key)
// and reads the answer into out.
func (c *Client) DeploymentsPost(ctx context.Context, sub string, body, out any) error {
	if c.control == "" {
		return Errorf(KindForbidden, "no_control_key", "deployments are written with the control key; set WICKET_NODE_CONTROL_KEY")
	}
	b, err := json.Marshal(body)
	if err != nil {
		return &Error{Kind: KindBadRequest, Code: "bad_request", Message: err.Error(), Err: err}
	}
	return c.do(ctx, http.MethodPost, "/v1/deployments"+sub, nil, b, KeyControl, out)
}
