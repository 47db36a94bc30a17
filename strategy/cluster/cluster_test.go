package cluster_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"wicket/internal/testkit"
	"wicket/strategy/cluster"
	"wicket/strategy/clustertest"
)

func TestUnreachableIsAClearErrorInBoundedTime(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens here now
	// The context outlasts the connect timeout by far: an answer that names
	// the cluster (not the context's deadline) came from Dial's own bound.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, err = cluster.Dial(ctx, cluster.DispatcherOptions{Options: cluster.Options{Key: testKey, URL: "nats://" + addr, ConnectTimeout: time.Second}})
	if err == nil || !strings.Contains(err.Error(), "cannot reach the research cluster at nats://"+addr) || ctx.Err() != nil {
		t.Fatalf("dial a dead address: %v (context: %v)", err, ctx.Err())
	}
}

func TestNoWorkersIsAClearErrorInBoundedTime(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	url := clustertest.Server(t)
	d, err := cluster.Dial(t.Context(), cluster.DispatcherOptions{Options: cluster.Options{Key: testKey, URL: url}, WaitWorkers: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// As above: the context outlasts the 1 s wait, so the error is the wait's.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	err = d.Ready(ctx)
	if err == nil || !strings.Contains(err.Error(), "no wicket workers in the research cluster") || !strings.Contains(err.Error(), "wicket worker --cluster") || ctx.Err() != nil {
		t.Fatalf("Ready without workers: %v (context: %v)", err, ctx.Err())
	}
	if d.Size() != 1 {
		t.Errorf("Size without workers = %d, want 1", d.Size())
	}
}

func TestTokenFromOptions(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	token := testkit.Secret(t, 16) // made up for this run
	url := clustertest.ServerWith(t, func(o *server.Options) { o.Authorization = token })
	_, err := cluster.Dial(t.Context(), cluster.DispatcherOptions{Options: cluster.Options{Key: testKey, URL: url, ConnectTimeout: 2 * time.Second}})
	if err == nil || !strings.Contains(err.Error(), "cannot reach the research cluster") || !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Fatalf("without the token: %v", err)
	}
	if strings.Contains(err.Error(), token) {
		t.Fatal("the error shows the token")
	}
	d, err := cluster.Dial(t.Context(), cluster.DispatcherOptions{Options: cluster.Options{Key: testKey, URL: url, Token: token}})
	if err != nil {
		t.Fatalf("with the token: %v", err)
	}
	d.Close()
	_, err = cluster.Dial(t.Context(), cluster.DispatcherOptions{Options: cluster.Options{Key: testKey, URL: url, Token: token, CredsFile: "x.creds"}})
	if err == nil || !strings.Contains(err.Error(), "one credential") {
		t.Fatalf("two credentials: %v", err)
	}
}
