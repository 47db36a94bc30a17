package cluster_test

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

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
	start := time.Now()
	_, err = cluster.Dial(t.Context(), cluster.DispatcherOptions{Options: cluster.Options{URL: "nats://" + addr, ConnectTimeout: time.Second}})
	if err == nil || !strings.Contains(err.Error(), "cannot reach the research cluster at nats://"+addr) {
		t.Fatalf("dial a dead address: %v", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the error took %s", took)
	}
}

func TestNoWorkersIsAClearErrorInBoundedTime(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	url := clustertest.Server(t)
	d, err := cluster.Dial(t.Context(), cluster.DispatcherOptions{Options: cluster.Options{URL: url}, WaitWorkers: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	start := time.Now()
	err = d.Ready(t.Context())
	if err == nil || !strings.Contains(err.Error(), "no wicket workers in the research cluster") || !strings.Contains(err.Error(), "wicket worker --cluster") {
		t.Fatalf("Ready without workers: %v", err)
	}
	if took := time.Since(start); took < time.Second || took > 5*time.Second {
		t.Errorf("the error took %s, want about the 1s wait", took)
	}
	if d.Size() != 1 {
		t.Errorf("Size without workers = %d, want 1", d.Size())
	}
}

func TestTokenFromOptions(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	var raw [16]byte
	rand.Read(raw[:])
	token := hex.EncodeToString(raw[:]) // made up for this run
	url := clustertest.ServerWith(t, func(o *server.Options) { o.Authorization = token })
	_, err := cluster.Dial(t.Context(), cluster.DispatcherOptions{Options: cluster.Options{URL: url, ConnectTimeout: 2 * time.Second}})
	if err == nil || !strings.Contains(err.Error(), "cannot reach the research cluster") || !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Fatalf("without the token: %v", err)
	}
	if strings.Contains(err.Error(), token) {
		t.Fatal("the error shows the token")
	}
	d, err := cluster.Dial(t.Context(), cluster.DispatcherOptions{Options: cluster.Options{URL: url, Token: token}})
	if err != nil {
		t.Fatalf("with the token: %v", err)
	}
	d.Close()
	_, err = cluster.Dial(t.Context(), cluster.DispatcherOptions{Options: cluster.Options{URL: url, Token: token, CredsFile: "x.creds"}})
	if err == nil || !strings.Contains(err.Error(), "one credential") {
		t.Fatalf("two credentials: %v", err)
	}
}
