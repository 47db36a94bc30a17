//go:build unix

package nodetest

import (
	"fmt"
	"net"
	"strconv"
	"syscall"
)

// reserveDeadAddr binds a TCP socket to an ephemeral loopback port without
// listening on it: the port is ours, and the kernel refuses connections
// to it.
func reserveDeadAddr() (string, func(), error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		return "", nil, err
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		syscall.Close(fd)
		return "", nil, err
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		syscall.Close(fd)
		return "", nil, err
	}
	in4, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		syscall.Close(fd)
		return "", nil, fmt.Errorf("bound to an unexpected address %v", sa)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(in4.Port)), func() { syscall.Close(fd) }, nil
}
