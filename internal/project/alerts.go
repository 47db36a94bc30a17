package project

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Alerts is wicket.toml's [alerts]: where the node sends its alerts (a
// breaker trip, a kill, a dead man's switch, a lost stream, a statement
// mismatch, a waiting approval) besides its log and the MCP listen
// streams, and where `wicket approve --http` links point.
//
//	[alerts]
//	webhook = "https://hooks.slack.com/services/..."  # empty: no webhook
//	template = "slack"                               # "", slack, discord, or a text/template of the JSON body
//	attempts = 4                                     # deliveries of one alert at most
//	approve_url = "https://approve.example.org"      # the public base of approval links (the operator's proxy)
type Alerts struct {
	Webhook    string `toml:"webhook"`
	Template   string `toml:"template"`
	Attempts   int    `toml:"attempts"`
	ApproveURL string `toml:"approve_url"`
	// Timeout bounds one delivery (default 2s): an alert reaches a
	// responsive receiver within 5 s.
	Timeout time.Duration `toml:"timeout"`
}

// AlertsKeyName is the file in settings/ holding the webhook's HMAC key
// (hex), made by `wicket node serve` when a webhook is configured and it
// is missing. The receiver checks each alert's signature with it.
const AlertsKeyName = "alerts.key"

func (a *Alerts) validate() error {
	for _, u := range []struct{ key, v string }{{"alerts.webhook", a.Webhook}, {"alerts.approve_url", a.ApproveURL}} {
		if u.v == "" {
			continue
		}
		p, err := url.Parse(u.v)
		if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
			return fmt.Errorf("%s is not an http(s) URL; give the full URL (https://host/path)", u.key)
		}
	}
	if a.Attempts < 0 || a.Attempts > 10 {
		return fmt.Errorf("alerts.attempts %d must be from 1 to 10 (0: the default, 4)", a.Attempts)
	}
	if a.Timeout < 0 || a.Timeout > 30*time.Second {
		return fmt.Errorf("alerts.timeout %s must be at most 30s", a.Timeout)
	}
	return nil
}

// AlertsKeyPath is settings/alerts.key.
func (p Project) AlertsKeyPath() string { return filepath.Join(p.SettingsDir(), AlertsKeyName) }

// AlertsKey reads settings/alerts.key, making it (32 random bytes, hex,
// mode 0600) when it is missing; made reports that it was.
func (p Project) AlertsKey() (key []byte, made bool, err error) {
	path := p.AlertsKeyPath()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return nil, false, err
		}
		if err := os.MkdirAll(p.SettingsDir(), 0o700); err != nil {
			return nil, false, err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, false, fmt.Errorf("make %s: %w", AlertsKeyName, err)
		}
		_, werr := f.WriteString(hex.EncodeToString(b) + "\n")
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, false, fmt.Errorf("make %s: %w", AlertsKeyName, werr)
		}
		return b, true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read settings/%s: %w", AlertsKeyName, err)
	}
	key, err = hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(key) < 32 {
		return nil, false, fmt.Errorf("settings/%s is not a hex key of 32 bytes or more; delete it and wicket node serve makes a new one (then give it to the webhook's receiver)", AlertsKeyName)
	}
	return key, false, nil
}
