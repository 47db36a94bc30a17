package main

import (
	"github.com/urfave/cli/v2"

	"wicket/internal/project"
	"wicket/strategy/research"
	"wicket/strategy/worker"
)

// researchEngine builds the in-process research engine a run function
// works through, local or over the cluster its command line names: the
// seam that keeps --cluster's flags out of the options structs.
type researchEngine func(p project.Project, cfg project.Config, pool *worker.Pool, rec research.Recorder) (*research.Local, func(), error)

// clusteredResearchOf is the engine of c's command line: clusteredResearch
// (research_engine.go) with c's --cluster flags.
func clusteredResearchOf(c *cli.Context) researchEngine {
	return func(p project.Project, cfg project.Config, pool *worker.Pool, rec research.Recorder) (*research.Local, func(), error) {
		return clusteredResearch(c.Context, clusterFlagsOf(c), c.App.ErrWriter, p, cfg, pool, rec)
	}
}
