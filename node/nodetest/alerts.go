package nodetest

import (
	"time"

	"wicket/node/alert"
)

// WithAlerts tells d every audit entry the node commits, and runs the
// daily statement at each tick of statements (nil: every 5 minutes).
func WithAlerts(d *alert.Dispatcher, statements <-chan time.Time) Option {
	return func(o *options) { o.alerts, o.statements = d, statements }
}
