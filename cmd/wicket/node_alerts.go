package main

import (
	"log/slog"
	"net/http"
	"time"

	"wicket/internal/project"
	"wicket/node/alert"
)

// nodeAlerts is the node's alert dispatcher, from wicket.toml's [alerts]:
// every alert goes to the node log and GET /v1/alerts (the MCP servers'
// listen streams read it), and to the webhook when one is configured,
// signed with settings/alerts.key (made here when missing).
func nodeAlerts(p project.Project, cfg project.Config, log *slog.Logger) (*alert.Dispatcher, error) {
	a := cfg.Alerts
	o := alert.Options{Log: log, Attempts: a.Attempts, AttemptTimeout: a.Timeout}
	if a.Webhook != "" {
		key, made, err := p.AlertsKey()
		if err != nil {
			return nil, err
		}
		if made {
			log.Warn("made settings/alerts.key, the webhook's HMAC key: give it to the receiver so it can check each alert's Wicket-Signature")
		}
		timeout := a.Timeout
		if timeout <= 0 {
			timeout = 2 * time.Second
		}
		wh, err := alert.NewWebhook(a.Webhook, key, a.Template, &http.Client{Timeout: timeout}, time.Now)
		if err != nil {
			return nil, err
		}
		o.Sinks = append(o.Sinks, wh)
		log.Info("alerts go to the node log, the MCP listen streams and a webhook", "webhook", wh.Name())
	}
	return alert.NewDispatcher(o), nil
}
