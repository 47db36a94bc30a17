package agent

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"wicket/node"
)

// The node's alerts (a breaker trip, a kill, a dead man's switch, a lost
// venue stream, a statement mismatch) reach this server's listen streams
// and legacy log: the node watch reads GET /v1/alerts at each poll and
// announces each new alert as a notice (logger "alert"). The first read
// announces only the alerts of the last alertLookback, so a session that
// starts listening hears what just happened, not the node's history. An alert never carries a link to the
// agent: an approval's one-time link is the operator's alone.

// alertLookback is how old an alert the first read still announces.
const alertLookback = 5 * time.Minute

// alertReader is a node that serves its alerts (node.Client).
type alertReader interface {
	Alerts(ctx context.Context, after int64) (node.AlertPage, error)
}

// alertCursor is how far the watch has read the node's alerts.
type alertCursor struct {
	mu     sync.Mutex
	primed bool
	next   int64
}

var watchAlerts sync.Map // *nodeWatch → *alertCursor

// pollAlerts announces the node's alerts raised since the last poll.
func (w *nodeWatch) pollAlerts(ctx context.Context) {
	r, ok := w.s.tb.Node.(alertReader)
	if !ok {
		return
	}
	v, _ := watchAlerts.LoadOrStore(w, &alertCursor{})
	c := v.(*alertCursor)
	c.mu.Lock()
	defer c.mu.Unlock()
	page, err := r.Alerts(ctx, c.next)
	if err != nil {
		return // a node without alerts (an older one), or lost: the snapshot poll says so
	}
	fresh := !c.primed || page.Next < c.next // first read, or the node restarted
	if fresh && c.next > 0 {
		if page, err = r.Alerts(ctx, 0); err != nil {
			return
		}
	}
	c.primed, c.next = true, page.Next
	for _, a := range page.Alerts {
		if fresh && w.s.opts.Now().Sub(a.Time) > alertLookback {
			continue
		}
		level := mcp.LoggingLevelWarning
		switch a.Severity {
		case "critical":
			level = mcp.LoggingLevelCritical
		case "notice":
			level = mcp.LoggingLevelNotice
		}
		w.s.announce(level, "alert", fmt.Sprintf("%s [%s]: %s", a.Title, a.Kind, a.Text))
	}
}
