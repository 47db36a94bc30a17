package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
)

// Listening: the node binds loopback unless told otherwise, and serves
// until its context ends.

// Listen opens a TCP listener on addr. It refuses any address that is not
// loopback (127.0.0.0/8, ::1 or localhost) unless allowRemote is set; an
// empty host means every interface and is refused the same way.
func Listen(addr string, allowRemote bool) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, &ListenError{Addr: addr, Msg: "is not host:port (for example 127.0.0.1:7879)"}
	}
	if !allowRemote && !isLoopback(host) {
		return nil, &ListenError{Addr: addr, Remote: true,
			Msg: "is not a loopback address; the node listens on loopback only (use 127.0.0.1), unless started with --allow-remote"}
	}
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("listen on %s: %w: another process (perhaps another node) holds it; stop it, or choose another address with --listen", addr, err)
	}
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// ListenError is Listen's refusal of an address.
type ListenError struct {
	Addr   string
	Remote bool // the address is valid but not loopback
	Msg    string
}

func (e *ListenError) Error() string { return fmt.Sprintf("listen address %q %s", e.Addr, e.Msg) }

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Serve serves the API on ln until ctx is done, then shuts down gracefully
// and closes the node.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      maxWait + 15*time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if serr := hs.Shutdown(sctx); serr != nil && err == nil {
		err = serr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return errors.Join(err, s.Close())
}
