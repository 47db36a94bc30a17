package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"wicket/agent"
	"wicket/internal/project"
)

// callersCommand manages the bearer-token callers of `wicket mcp --http`.
func callersCommand() *cli.Command {
	return &cli.Command{
		Name:  "callers",
		Usage: "manage who may call `wicket mcp --http`: named callers, each with a bearer token and its own profile",
		Description: "A caller is one agent or person with a bearer token and a profile (full, read-only, offline) minus any " +
			"--deny-tool. Only the token's SHA-256 is kept, in settings/" + agent.CallersFile + " (mode 0600); the token is printed " +
			"once by `add`. A running server reads the callers when it starts: restart it after a change.",
		Subcommands: []*cli.Command{
			{
				Name:      "add",
				Usage:     "add a caller and print its bearer token (once)",
				ArgsUsage: "NAME",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "profile", Usage: "what the caller is offered: " + strings.Join(agent.Profiles, ", ")},
					&cli.StringSliceFlag{Name: "deny-tool", Usage: "refuse this tool to the caller although the profile allows it (repeatable)"},
				},
				Action: callersAdd,
			},
			{
				Name:   "list",
				Usage:  "list the callers (names, profiles, deny lists; never tokens)",
				Flags:  []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "machine-readable output"}},
				Action: callersList,
			},
			{
				Name:      "remove",
				Usage:     "remove a caller (its token stops working when the server restarts)",
				ArgsUsage: "NAME",
				Action:    callersRemove,
			},
		},
	}
}

func callersPath(p project.Project) string { return filepath.Join(p.SettingsDir(), agent.CallersFile) }

// openCallers loads the project's callers.
func openCallers(c *cli.Context) (project.Project, *agent.Callers, error) {
	p, _, err := openProject(c)
	if err != nil {
		return p, nil, err
	}
	cs, err := agent.LoadCallers(callersPath(p))
	return p, cs, err
}

func oneName(c *cli.Context, verb string) (string, error) {
	if c.NArg() != 1 {
		return "", usagef("callers %s takes one NAME, got %d arguments", verb, c.NArg())
	}
	return c.Args().First(), nil
}

// addArgs reads `callers add NAME --profile P [--deny-tool T]...` with the
// flags before or after NAME (urfave/cli stops parsing at NAME).
func addArgs(c *cli.Context) (name, profile string, deny []string, err error) {
	profile, deny = c.String("profile"), c.StringSlice("deny-tool")
	var names []string
	rest := c.Args().Slice()
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		flag, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || (flag != "profile" && flag != "deny-tool") {
			if strings.HasPrefix(a, "-") {
				return "", "", nil, usagef("callers add: unknown flag %s; valid: --profile, --deny-tool", a)
			}
			names = append(names, a)
			continue
		}
		if !hasVal {
			if i+1 == len(rest) {
				return "", "", nil, usagef("callers add: %s needs a value", a)
			}
			i++
			val = rest[i]
		}
		if flag == "profile" {
			profile = val
		} else {
			deny = append(deny, val)
		}
	}
	if len(names) != 1 {
		return "", "", nil, usagef("callers add takes one NAME, got %d: usage: wicket callers add NAME --profile P [--deny-tool T]...", len(names))
	}
	if profile == "" {
		return "", "", nil, usagef("callers add %s: --profile is required (%s)", names[0], strings.Join(agent.Profiles, ", "))
	}
	return names[0], profile, deny, nil
}

func callersAdd(c *cli.Context) error {
	name, profile, deny, err := addArgs(c)
	if err != nil {
		return err
	}
	p, cs, err := openCallers(c)
	if err != nil {
		return err
	}
	token, err := cs.Add(name, profile, deny, time.Now())
	if err != nil {
		var ue *agent.UsageError
		if errors.As(err, &ue) {
			return usagef("%v", err)
		}
		return err
	}
	if err := cs.Save(callersPath(p)); err != nil {
		return fmt.Errorf("save callers: %w", err)
	}
	fmt.Fprintln(c.App.Writer, token)
	fmt.Fprintf(c.App.ErrWriter, "caller %s added with profile %s. The line above is its bearer token, shown this once: "+
		"give it to the caller (Authorization: Bearer <token>); `wicket mcp-config --http ADDR` prints a client block. "+
		"Restart a running `wicket mcp --http` to admit it.\n", name, profile)
	return nil
}

func callersList(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("callers list takes no arguments, got %q", c.Args().First())
	}
	_, cs, err := openCallers(c)
	if err != nil {
		return err
	}
	list := cs.List()
	if c.Bool("json") {
		type row struct {
			Name    string    `json:"name"`
			Profile string    `json:"profile"`
			Deny    []string  `json:"deny_tool"`
			Added   time.Time `json:"added"`
		}
		rows := []row{}
		for _, x := range list {
			deny := x.Deny
			if deny == nil {
				deny = []string{}
			}
			rows = append(rows, row{x.Name, x.Profile, deny, x.Added})
		}
		return writeJSON(c.App.Writer, rows)
	}
	if len(list) == 0 {
		fmt.Fprintln(c.App.ErrWriter, "no callers; add one with `wicket callers add NAME --profile P`")
		return nil
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPROFILE\tDENY-TOOL\tADDED")
	for _, x := range list {
		deny := strings.Join(x.Deny, ",")
		if deny == "" {
			deny = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", x.Name, x.Profile, deny, x.Added.UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}

func callersRemove(c *cli.Context) error {
	name, err := oneName(c, "remove")
	if err != nil {
		return err
	}
	p, cs, err := openCallers(c)
	if err != nil {
		return err
	}
	if err := cs.Remove(name); err != nil {
		return usagef("%v", err)
	}
	if err := cs.Save(callersPath(p)); err != nil {
		return fmt.Errorf("save callers: %w", err)
	}
	fmt.Fprintf(c.App.ErrWriter, "caller %s removed; restart a running `wicket mcp --http` for it to take effect\n", name)
	return nil
}

// checkHTTPFlags validates the --http flag family before anything starts.
func checkHTTPFlags(c *cli.Context, addr string) error {
	remote, noAuth := c.Bool("allow-remote"), c.Bool("no-auth")
	cert, key := c.String("tls-cert"), c.String("tls-key")
	if addr == "" {
		for _, f := range []string{"no-auth", "allow-remote", "tls-cert", "tls-key", "allow-origin"} {
			if c.IsSet(f) {
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
func serveHTTP(c *cli.Context, opts agent.Options, b agent.Backends, addr string, callers *agent.Callers, oauth *agent.OAuth) error {
	stderr := c.App.ErrWriter
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	bound := ln.Addr().String()
	h, err := agent.NewHTTP(opts, b, agent.HTTPOptions{
		Addr: bound, Callers: callers, OAuth: oauth, Remote: c.Bool("allow-remote"), AllowOrigins: c.StringSlice("allow-origin"),
	})
	if err != nil {
		ln.Close()
		var ue *agent.UsageError
		if errors.As(err, &ue) {
			return usagef("%v", err)
		}
		return err
	}
	srv := h.Server() // header, body and idle bounds (agent/http.go)
	scheme := "http"
	if c.String("tls-cert") != "" {
		// Loaded before the server says it serves, so a bad pair never
		// prints a URL that cannot answer (checkHTTPFlags read it once).
		cert, err := tls.LoadX509KeyPair(c.String("tls-cert"), c.String("tls-key"))
		if err != nil {
			ln.Close()
			return usagef("--tls-cert / --tls-key: %v", err)
		}
		scheme = "https"
		srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	}
	who := "callers from settings/" + agent.CallersFile
	if callers == nil {
		who = "no auth, profile " + opts.Profile
	}
	if oauth != nil {
		who += " and OAuth access tokens, metadata at " + agent.PRMPath
	}
	fmt.Fprintf(stderr, "wicket mcp: serving Streamable HTTP at %s://%s%s (%s)\n", scheme, bound, agent.MCPPath, who)

	served := make(chan error, 1)
	limited := h.Listener(ln, scheme == "https") // connections per remote address
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
	case <-c.Context.Done():
	}
	grace := c.Duration("shutdown-grace")
	fmt.Fprintf(stderr, "wicket mcp: shutting down; calls in flight have %s to finish\n", grace)
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	herr := make(chan error, 1)
	go func() { herr <- h.Shutdown(ctx) }()
	serr := srv.Shutdown(ctx)
	if err := <-herr; err != nil {
		fmt.Fprintf(stderr, "wicket mcp: %v\n", err)
	}
	if serr != nil && !errors.Is(serr, context.DeadlineExceeded) {
		return serr
	}
	return nil
}

// parseSize reads a byte count: 4194304, 512KiB, 4MiB.
func parseSize(s string) (int, error) {
	n, err := parseSizeUpTo(s, 1<<30)
	return int(n), err
}

// parseSizeUpTo reads a byte count (4194304, 512KiB, 4MiB, 2GiB) of at
// most ceiling bytes.
func parseSizeUpTo(s string, ceiling int64) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a size: give bytes, or a whole number of KiB, MiB or GiB (e.g. 4MiB)", s)
	}
	if n > ceiling/mult {
		return 0, fmt.Errorf("%q is over the %s ceiling", s, sizeText(ceiling))
	}
	return n * mult, nil
}

// sizeText writes a byte count in the largest unit that divides it.
func sizeText(n int64) string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{" GiB", 1 << 30}, {" MiB", 1 << 20}, {" KiB", 1 << 10}} {
		if n >= u.mult && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
