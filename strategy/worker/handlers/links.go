package handlers

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A worker keeps a hard link to each shared bars file it wrote, in a
// directory of its own under TMPDIR, for as long as its cache holds the
// bars: the caller removes a sweep's directory when the sweep ends, and
// a warm session's next sweep of the same bars then links the file into
// its new directory (reshare) instead of writing 48 MB a million bars
// again, or touching the columns it never read. A worker removes a link
// when its cache drops the bars; the directories of workers that died
// are removed by the next worker that makes its own.

// linkPrefix begins the name of a worker's link directory; the worker's
// process id follows.
const linkPrefix = "wicket-worker-bars-"

// linkDir returns the worker's link directory, made on first use
// (removing those of workers no longer running), or "" when it cannot
// be made: the bars are then copied, not linked.
func (c *barCache) linkDir() string {
	c.linkOnce.Do(func() {
		tmp := os.TempDir()
		stale, _ := filepath.Glob(filepath.Join(tmp, linkPrefix+"*"))
		for _, d := range stale {
			pid, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(filepath.Base(d), linkPrefix), "-", 2)[0])
			if err == nil && pid != os.Getpid() && !processAlive(pid) {
				os.RemoveAll(d)
			}
		}
		d, err := os.MkdirTemp(tmp, fmt.Sprintf("%s%d-", linkPrefix, os.Getpid()))
		if err == nil {
			c.links = d
		}
	})
	return c.links
}

// keepLink links the shared bars file at path into the link directory
// and returns the link, or "" when it cannot.
func (c *barCache) keepLink(path, digest string) string {
	dir := c.linkDir()
	if dir == "" {
		return ""
	}
	link := filepath.Join(dir, digest+".bars")
	if err := os.Link(path, link); err != nil && !os.IsExist(err) {
		return ""
	}
	return link
}
