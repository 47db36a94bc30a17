package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/urfave/cli/v2"

	"wicket/internal/project"
	"wicket/strategy/cluster"
	"wicket/strategy/research"
	"wicket/strategy/worker"
)

// clusterFlag is --cluster on the commands that sweep.
func clusterFlag() cli.Flag {
	return &cli.StringFlag{Name: "cluster", Usage: "run sweep chunks on the `wicket worker`s of the NATS JetStream server at `URL` (nats://host:4222, tls://host:4222 for TLS); overrides [research] cluster"}
}

// insecureClusterFlag is --insecure-cluster beside each --cluster.
func insecureClusterFlag() cli.Flag {
	return &cli.BoolFlag{Name: "insecure-cluster", Usage: "allow a research cluster that is not on this machine without TLS or without a NATS credential (its chunks, strategy source included, and results then travel readable)"}
}

// clusterFlags are the research cluster's flags as given: --cluster,
// --cluster-ca (wicket worker) and --insecure-cluster.
type clusterFlags struct {
	url      string
	urlSet   bool // --cluster was given (an empty one is refused)
	ca       string
	caSet    bool // --cluster-ca was given (an empty one is refused)
	insecure bool
}

// clusterFlagsOf reads c's research cluster flags.
func clusterFlagsOf(c *cli.Context) clusterFlags {
	return clusterFlags{
		url: c.String("cluster"), urlSet: c.IsSet("cluster"),
		ca: c.String("cluster-ca"), caSet: c.IsSet("cluster-ca"), insecure: c.Bool("insecure-cluster"),
	}
}

// clusterOptions resolves the cluster address (--cluster wins over
// [research] cluster), its credential and the cluster key from the
// environment or secrets.env; warnings go to stderr. ok is false when no
// cluster is configured.
func clusterOptions(f clusterFlags, stderr io.Writer, p *project.Project, cfg project.Config) (o cluster.Options, ok bool, err error) {
	url := cfg.Research.Cluster
	if f.urlSet {
		url = f.url
		if url == "" {
			return o, false, usagef("--cluster needs a URL, e.g. nats://127.0.0.1:4222")
		}
	}
	if url == "" {
		return o, false, nil
	}
	if err := project.ValidateClusterURL(url); err != nil {
		return o, false, usageError{err}
	}
	s, err := loadSecrets(p)
	if err != nil {
		return o, false, err
	}
	o.URL = url
	key, _, _ := s.Lookup(project.KeyCluster)
	o.Key = []byte(key)
	o.Token, _, _ = s.Lookup(project.KeyNATSToken)
	o.User, _, _ = s.Lookup(project.KeyNATSUser)
	o.Password, _, _ = s.Lookup(project.KeyNATSPassword)
	o.CredsFile, _, _ = s.Lookup(project.KeyNATSCreds)
	o.NKeyFile, _, _ = s.Lookup(project.KeyNATSNKey)
	for _, f := range []struct{ key, path string }{{project.KeyNATSCreds, o.CredsFile}, {project.KeyNATSNKey, o.NKeyFile}} {
		if fi, err := os.Stat(f.path); f.path != "" && err == nil && runtime.GOOS != "windows" && fi.Mode().Perm()&0o044 != 0 {
			fmt.Fprintf(stderr, "wicket: warning: %s (%s) is readable by other users (mode %o); it holds a secret seed: chmod 600 it\n", f.path, f.key, fi.Mode().Perm())
		}
	}
	// The CA: --cluster-ca (wicket worker), else [research] cluster_ca,
	// relative to the project.
	o.CAFile = cfg.Research.ClusterCA
	if o.CAFile != "" && !filepath.IsAbs(o.CAFile) && p != nil {
		o.CAFile = filepath.Join(p.Root, o.CAFile)
	}
	if f.caSet {
		if o.CAFile = f.ca; o.CAFile == "" {
			return o, false, usagef("--cluster-ca needs the PEM file of the CA that signed the NATS server's certificate")
		}
	}
	if err := project.ValidateClusterCA(url, o.CAFile); err != nil {
		return o, false, usageError{fmt.Errorf("the research cluster's CA: %w", err)}
	}
	if err := cluster.CheckTransport(o); err != nil {
		if !f.insecure {
			return o, false, usageError{err}
		}
		o.Insecure = true
		fmt.Fprintf(stderr, "wicket: warning: --insecure-cluster: the research cluster at %s is reached without TLS or without a credential; its chunks (strategy source included) and results travel readable, and its signatures alone stop forged answers\n", url)
	}
	return o, true, nil
}

// useCluster sets rc.Chunks to the cluster's dispatcher when one is
// configured; the returned func closes it.
func useCluster(ctx context.Context, f clusterFlags, stderr io.Writer, p *project.Project, cfg project.Config, rc *research.Config) (func(), error) {
	o, ok, err := clusterOptions(f, stderr, p, cfg)
	if err != nil || !ok {
		return func() {}, err
	}
	d, err := cluster.Dial(ctx, cluster.DispatcherOptions{Options: o, WaitWorkers: clusterWait, Log: stderr})
	if err != nil {
		return func() {}, err
	}
	rc.Chunks = d
	return func() { d.Close() }, nil
}

// clusterWait bounds the wait for a worker to join (tests shorten it
// through WICKET_CLUSTER_WAIT, a duration).
var clusterWait = func() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("WICKET_CLUSTER_WAIT")); err == nil && d > 0 {
		return d
	}
	return cluster.DefaultWaitWorkers
}()

// clusterWorkerCommand is `wicket worker`: a machine's share of a
// research cluster.
func clusterWorkerCommand() *cli.Command {
	return &cli.Command{
		Name:  "worker",
		Usage: "run sweep chunks for a research cluster on this machine",
		Description: "Joins the NATS JetStream server at --cluster and runs the sweep chunks that `wicket sweep`, `wicket walk-forward`,\n" +
			"`wicket mcp` and `wicket data serve` queue there when [research] cluster is set. Strategies run in --workers\n" +
			"worker processes under the same memory and CPU limits as local research. Bars arrive from the cluster once per\n" +
			"machine and are kept in --cache. The cluster key (WICKET_CLUSTER_KEY, the same on every machine) and the credential\n" +
			"(WICKET_NATS_USER and WICKET_NATS_PASSWORD, WICKET_NATS_CREDS_FILE, WICKET_NATS_NKEY_FILE or WICKET_NATS_TOKEN) come\n" +
			"from the environment or the project's secrets.env. A cluster that is not on this machine must be tls:// and need a\n" +
			"credential unless --insecure-cluster is given. A tls:// cluster is verified against the system's roots, or against\n" +
			"--cluster-ca (a private CA's certificate). Stop it with Ctrl-C; a chunk it held goes to another worker.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "cluster", Usage: "the NATS JetStream server, `URL` nats://host:4222 or tls://host:4222 (default [research] cluster)"},
			&cli.IntFlag{Name: "workers", Usage: "worker processes on this machine, `N` (default research.workers, or one per core)"},
			insecureClusterFlag(),
			&cli.StringFlag{Name: "cluster-ca", Usage: "with a tls:// cluster, the PEM `FILE` of the CA that signed the server's certificate (default [research] cluster_ca; else the system's roots)"},
			&cli.StringFlag{Name: "cache", Usage: "`DIR` for the bars this machine has fetched (default the user cache directory)"},
			&cli.DurationFlag{Name: "ack-wait", Value: cluster.DefaultAckWait, Hidden: true, Usage: "how long a chunk may go without progress before another worker gets it"},
		},
		Action: clusterWorkerAction,
	}
}

func clusterWorkerAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("worker takes no arguments, got %q (usage: wicket worker --cluster nats://host:4222)", c.Args().First())
	}
	o := clusterWorkerOptions{
		project: c.String("project"), cluster: clusterFlagsOf(c), workers: c.Int("workers"), workersSet: c.IsSet("workers"),
		cache: c.String("cache"), ackWait: c.Duration("ack-wait"),
	}
	return runClusterWorker(c.Context, o, c.App.Writer, c.App.ErrWriter)
}

// clusterWorkerOptions is what wicket worker --cluster works with, filled
// from its flags.
type clusterWorkerOptions struct {
	project    string // the --project flag; no project is allowed
	cluster    clusterFlags
	workers    int  // worker processes
	workersSet bool // --workers was given; else research.workers
	cache      string
	ackWait    time.Duration
	// host names this machine to the cluster; empty: its hostname.
	host string
}

// runClusterWorker runs the cluster's sweep chunks on this machine until
// ctx ends.
func runClusterWorker(ctx context.Context, o clusterWorkerOptions, _, stderr io.Writer) error {
	p, cfg, err := openProjectAt(o.project)
	var pp *project.Project
	switch {
	case err == nil:
		pp = &p
	case errors.Is(err, project.ErrNoProject):
		cfg = project.Defaults()
	default:
		return err
	}
	co, ok, err := clusterOptions(o.cluster, stderr, pp, cfg)
	if err != nil {
		return err
	}
	if !ok {
		return usagef("worker needs --cluster URL (or [research] cluster in wicket.toml), e.g. --cluster nats://127.0.0.1:4222")
	}
	size := cfg.Research.Workers
	if o.workersSet {
		if size = o.workers; size <= 0 {
			return usagef("--workers %d must be at least 1", size)
		}
	}
	cache := o.cache
	if cache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return fmt.Errorf("no user cache directory for bars; give --cache DIR: %w", err)
		}
		cache = filepath.Join(dir, "wicket", "cluster-bars")
	}
	pool, err := worker.NewPool(worker.Config{Size: size, MemoryMiB: cfg.Research.WorkerMemoryMiB, Log: stderr})
	if err != nil {
		return err
	}
	defer pool.Close()
	host := o.host
	if host == "" {
		host, _ = os.Hostname()
	}
	return cluster.Serve(ctx, cluster.WorkerOptions{
		Options: co, Pool: pool, CacheDir: cache, AckWait: o.ackWait, Host: host, Log: stderr,
	})
}
