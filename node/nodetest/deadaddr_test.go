package nodetest_test

import (
	"net"
	"runtime"
	"testing"
	"time"

	"wicket/node/nodetest"
)

func TestDeadAddrRefuses(t *testing.T) {
	addr := nodetest.DeadAddr(t)
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err == nil {
		c.Close()
		t.Fatalf("a connection to %s was accepted", addr)
	}
	if runtime.GOOS == "windows" {
		return // the fallback there does not hold the port
	}
	// The port stays ours: nobody can listen on it while the test runs.
	if ln, err := net.Listen("tcp", addr); err == nil {
		ln.Close()
		t.Errorf("listening on the reserved %s succeeded", addr)
	}
}
