// Package clustertest starts an embedded NATS server with JetStream for
// the research cluster's tests: loopback, an ephemeral port, a temporary
// store. It is for tests only and must never be imported by the binary.
package clustertest

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Server starts a JetStream-enabled NATS server on 127.0.0.1 for the
// test's life and returns its nats:// URL.
func Server(t testing.TB) string {
	t.Helper()
	return ServerWith(t, nil)
}

// ServerWith is Server with the options changed by edit first (a token,
// say); edit may be nil.
func ServerWith(t testing.TB, edit func(*server.Options)) string {
	t.Helper()
	o := &server.Options{
		Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		NoLog: true, NoSigs: true, HTTPPort: 0,
	}
	if edit != nil {
		edit(o)
	}
	s, err := server.NewServer(o)
	if err != nil {
		t.Fatalf("start nats-server: %v", err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		t.Fatal("nats-server did not start")
	}
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	return s.ClientURL()
}
