package nodetest

import "testing"

// DeadAddr returns a loopback host:port where nothing listens, held for
// the test: a connection to it is refused at once, whatever else runs on
// the machine, and no other process can take the port before the test
// ends. Tests use it for "no node there" instead of a fixed port such as
// the default 127.0.0.1:7879, which a real node may be using.
func DeadAddr(t testing.TB) string {
	t.Helper()
	addr, release, err := reserveDeadAddr()
	if err != nil {
		t.Fatalf("nodetest: reserve a dead address: %v", err)
	}
	t.Cleanup(release)
	return addr
}
