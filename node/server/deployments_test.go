package server_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"wicket/node"
	"wicket/node/nodetest"
)

// TestDeploymentsMountedBehindAuth: /v1/deployments reaches the hook
// only signed; the observe key reads it and cannot write it; a node
// without the hook says it runs no deployments.
func TestDeploymentsMountedBehindAuth(t *testing.T) {
	var seen []string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Method+" "+r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	})
	n := nodetest.NewServer(t, nodetest.WithDeployments(h))
	ctx := context.Background()
	observer, err := node.NewClient(n.Addr, n.ObserveKey, "")
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]bool
	if err := observer.DeploymentsGet(ctx, "", nil, &out); err != nil || !out["ok"] {
		t.Fatalf("observe read: %v %v", out, err)
	}
	if err := observer.DeploymentsGet(ctx, "/dep-1", nil, &out); err != nil {
		t.Fatal(err)
	}
	// A forged client: observe key signing a write.
	forged, _ := node.NewClient(n.Addr, "", n.ObserveKey)
	var ne *node.Error
	if err := forged.DeploymentsPost(ctx, "/dep-1/stop", map[string]string{}, &out); !errors.As(err, &ne) || ne.Kind != node.KindAuth {
		t.Fatalf("a write signed with a key the node does not hold as control: %v", err)
	}
	if err := n.Client().DeploymentsPost(ctx, "/dep-1/stop", map[string]string{}, &out); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 || seen[2] != "POST /v1/deployments/dep-1/stop" {
		t.Fatalf("the hook saw %v", seen)
	}
	bare := nodetest.NewServer(t)
	if err := bare.Client().DeploymentsGet(ctx, "", nil, &out); !errors.As(err, &ne) || ne.Code != "deployments_off" {
		t.Fatalf("a node without deployments: %v", err)
	}
}
