//go:build !unix

package nodetest

import "net"

// reserveDeadAddr takes an ephemeral loopback port and closes it again:
// without a bound-but-not-listening socket this is the nearest portable
// way to an address where nothing listens.
func reserveDeadAddr() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr, func() {}, nil
}
