package main

import (
	"context"
	"io"

	"wicket/internal/project"
	"wicket/strategy/research"
	"wicket/strategy/worker"
)

// The research engine of every command that runs research on this machine
// (backtest over a series set, sweep, walk-forward, data serve, mcp): one
// worker pool sized by the project's [research] section, and research.Local
// over it, its sweep chunks on a research cluster when one is named. With --addr, sweep, walk-forward and mcp use research.Client
// (dataClient) instead.

// researchPool starts the worker processes that run strategy code, sized by
// cfg's [research] workers and worker_memory_mib; the caller closes it.
func researchPool(cfg project.Config) (*worker.Pool, error) {
	return worker.NewPool(worker.Config{Size: cfg.Research.Workers, MemoryMiB: cfg.Research.WorkerMemoryMiB})
}

// localResearch is the research engine of project p on pool, recording
// into rec (nil: not recorded in the research ledger).
func localResearch(p project.Project, cfg project.Config, pool *worker.Pool, rec research.Recorder) *research.Local {
	return research.NewLocal(research.Config{Project: p, Research: cfg.Research, Pool: pool, Recorder: rec})
}

// clusteredResearch is localResearch whose sweep chunks go to the research
// cluster when f's --cluster or [research] cluster names one (useCluster,
// cluster.go), dialled under ctx, its warnings on stderr; close releases
// the cluster's connection.
func clusteredResearch(ctx context.Context, f clusterFlags, stderr io.Writer, p project.Project, cfg project.Config, pool *worker.Pool, rec research.Recorder) (*research.Local, func(), error) {
	rc := research.Config{Project: p, Research: cfg.Research, Pool: pool, Recorder: rec}
	closeCluster, err := useCluster(ctx, f, stderr, &p, cfg, &rc)
	if err != nil {
		return nil, nil, err
	}
	return research.NewLocal(rc), closeCluster, nil
}

// oneWorkerPool is a pool of one worker process with cfg's memory limit:
// a single-series backtest and the strategy commands run their one
// strategy in it.
func oneWorkerPool(cfg project.Config) (*worker.Pool, error) {
	return worker.NewPool(worker.Config{Size: 1, MemoryMiB: cfg.Research.WorkerMemoryMiB})
}
