package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/urfave/cli/v2"

	"wicket/agent"
	"wicket/agent/front"
)

// The --http side of wicket mcp: checking its flag family and serving
// the Streamable HTTP transport to the project's callers.

// mcpHTTPOptions are wicket mcp's --http flag family, as given.
type mcpHTTPOptions struct {
	addr          string // --http HOST:PORT; empty: stdio
	noAuth        bool
	allowRemote   bool
	tlsCert       string
	tlsKey        string
	allowOrigins  []string
	shutdownGrace time.Duration
	set           map[string]bool // the flags of the family given on the command line
}

// mcpHTTPFlagsOf reads the --http flag family from c.
func mcpHTTPFlagsOf(c *cli.Context) mcpHTTPOptions {
	return mcpHTTPOptions{
		addr: c.String("http"), noAuth: c.Bool("no-auth"), allowRemote: c.Bool("allow-remote"),
		tlsCert: c.String("tls-cert"), tlsKey: c.String("tls-key"), allowOrigins: c.StringSlice("allow-origin"),
		shutdownGrace: c.Duration("shutdown-grace"),
		set:           setFlags(c, "no-auth", "allow-remote", "tls-cert", "tls-key", "allow-origin"),
	}
}

// checkHTTPFlags validates the --http flag family before anything starts.
func checkHTTPFlags(o mcpHTTPOptions) error {
	addr := o.addr
	remote, noAuth := o.allowRemote, o.noAuth
	cert, key := o.tlsCert, o.tlsKey
	if addr == "" {
		for _, f := range []string{"no-auth", "allow-remote", "tls-cert", "tls-key", "allow-origin"} {
			if o.set[f] {
				return usagef("--%s needs --http HOST:PORT", f)
			}
		}
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("--http %q: want HOST:PORT, e.g. 127.0.0.1:8765: %v", addr, err)
	}
	if (cert == "") != (key == "") {
		return usagef("give both --tls-cert and --tls-key, or neither")
	}
	if remote && noAuth {
		return usagef("--no-auth serves loopback only; it cannot be combined with --allow-remote")
	}
	if remote && cert == "" {
		return usagef("--allow-remote needs --tls-cert and --tls-key: a bearer token must not cross a network in clear text")
	}
	if !remote && !isLoopbackHost(host) {
		return usagef("--http %s is not a loopback address; this server listens on 127.0.0.1 or ::1 unless --allow-remote (with --tls-cert and --tls-key)", addr)
	}
	if cert != "" {
		if _, err := tls.LoadX509KeyPair(cert, key); err != nil {
			return usagef("--tls-cert %s / --tls-key %s: %v (give a PEM certificate and its PEM private key)", cert, key, err)
		}
	}
	return nil
}

// serveHTTP listens and serves MCP over Streamable HTTP until ctx ends
// (SIGTERM), then lets calls in flight finish within --shutdown-grace.
func serveHTTP(ctx context.Context, opts agent.Options, b agent.Backends, o mcpHTTPOptions, callers *front.Callers, oauth *front.OAuth, stderr io.Writer) error {
	addr := o.addr
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	bound := ln.Addr().String()
	h, err := front.NewHTTP(opts, b, front.HTTPOptions{
		Addr: bound, Callers: callers, OAuth: oauth, Remote: o.allowRemote, AllowOrigins: o.allowOrigins,
	})
	if err != nil {
		ln.Close()
		var ue *agent.UsageError
		if errors.As(err, &ue) {
			return usagef("%v", err)
		}
		return err
	}
	srv := h.Server() // header, body and idle bounds (agent/front/http.go)
	scheme := "http"
	if o.tlsCert != "" {
		// Loaded before the server says it serves, so a bad pair never
		// prints a URL that cannot answer (checkHTTPFlags read it once).
		cert, err := tls.LoadX509KeyPair(o.tlsCert, o.tlsKey)
		if err != nil {
			ln.Close()
			return usagef("--tls-cert / --tls-key: %v", err)
		}
		scheme = "https"
		srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	}
	who := "callers from settings/" + front.CallersFile
	if callers == nil {
		who = "no auth, profile " + opts.Profile
	}
	if oauth != nil {
		who += " and OAuth access tokens, metadata at " + front.PRMPath
	}
	fmt.Fprintf(stderr, "wicket mcp: serving Streamable HTTP at %s://%s%s (%s)\n", scheme, bound, front.MCPPath, who)

	served := make(chan error, 1)
	limited := h.Listener(ln, scheme == "https") // connection bounds (agent/front/http_conns.go)
	go func() {
		if scheme == "https" {
			served <- srv.ServeTLS(limited, "", "")
		} else {
			served <- srv.Serve(limited)
		}
	}()
	select {
	case err := <-served:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
	}
	grace := o.shutdownGrace
	fmt.Fprintf(stderr, "wicket mcp: shutting down; calls in flight have %s to finish\n", grace)
	stopCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	herr := make(chan error, 1)
	go func() { herr <- h.Shutdown(stopCtx) }()
	serr := srv.Shutdown(stopCtx)
	if err := <-herr; err != nil {
		fmt.Fprintf(stderr, "wicket mcp: %v\n", err)
	}
	if serr != nil && !errors.Is(serr, context.DeadlineExceeded) {
		return serr
	}
	return nil
}
