package alert

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"text/template"
	"time"
)

// A webhook delivery is one POST of JSON. It carries three headers:
// the alert id (a receiver that saw it already, because an answer was
// lost and the delivery retried, drops it), the time it was signed, and
// the signature: hex HMAC-SHA256, under the webhook's own key, of the
// time, a dot, and the body.
const (
	HeaderID        = "Wicket-Alert-Id"
	HeaderTimestamp = "Wicket-Timestamp"
	HeaderSignature = "Wicket-Signature"
	signaturePrefix = "sha256="
)

// MinKeyLength is the shortest HMAC key a webhook takes.
const MinKeyLength = 32

// Sign is the signature header of body signed at ts (unix seconds).
func Sign(key []byte, ts string, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return signaturePrefix + hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether sig is key's signature of body at ts; a receiver
// also checks ts is recent.
func Verify(key []byte, ts string, body []byte, sig string) bool {
	return hmac.Equal([]byte(Sign(key, ts, body)), []byte(sig))
}

// Templates are the built-in bodies: "" (the Alert itself as JSON), and
// the incoming-webhook shapes of Slack ({"text"}) and Discord ({"content"}).
var Templates = map[string]string{
	"slack":   `{"text": {{json (print "[" .Severity "] " .Title ": " .Text (link .Link))}}}`,
	"discord": `{"content": {{json (print "**" .Title "** (" .Severity "): " .Text (link .Link))}}}`,
}

// Webhook posts alerts to one URL.
type Webhook struct {
	url    string
	key    []byte
	tmpl   *template.Template // nil: the Alert as JSON
	client *http.Client
	now    func() time.Time
}

// NewWebhook is a webhook sink posting to rawURL, signing with key. tmpl
// is "", a built-in name (Templates) or a text/template of the body, with
// the Alert as its data and json and link as functions.
func NewWebhook(rawURL string, key []byte, tmpl string, client *http.Client, now func() time.Time) (*Webhook, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("alerts webhook %q is not an http(s) URL; give the receiver's full URL", redact(rawURL))
	}
	if len(key) < MinKeyLength {
		return nil, fmt.Errorf("alerts webhook: the HMAC key is %d bytes, under %d; make a new one (wicket node serve makes settings/alerts.key when it is missing)", len(key), MinKeyLength)
	}
	w := &Webhook{url: rawURL, key: append([]byte(nil), key...), client: client, now: now}
	if w.client == nil {
		w.client = &http.Client{}
	}
	if w.now == nil {
		w.now = time.Now
	}
	if b, ok := Templates[tmpl]; ok {
		tmpl = b
	}
	if tmpl != "" {
		t, err := template.New("webhook").Funcs(template.FuncMap{
			"json": func(v any) (string, error) { b, err := json.Marshal(v); return string(b), err },
			"link": func(l string) string {
				if l == "" {
					return ""
				}
				return " " + l
			},
		}).Parse(tmpl)
		if err != nil {
			return nil, fmt.Errorf("alerts webhook template: %w; give slack, discord, or a text/template of the JSON body", err)
		}
		w.tmpl = t
	}
	return w, nil
}

// Name is the sink's name in the log: the receiver's host only (a
// webhook URL's path is often its secret).
func (w *Webhook) Name() string {
	u, _ := url.Parse(w.url)
	return "webhook " + u.Host
}

// Body is a's request body.
func (w *Webhook) Body(a Alert) ([]byte, error) {
	if w.tmpl == nil {
		return json.Marshal(a)
	}
	var b bytes.Buffer
	if err := w.tmpl.Execute(&b, a); err != nil {
		return nil, err
	}
	if !json.Valid(b.Bytes()) {
		return nil, errors.New("the webhook template did not make JSON")
	}
	return b.Bytes(), nil
}

// Deliver posts a once, signed.
func (w *Webhook) Deliver(ctx context.Context, a Alert) error {
	body, err := w.Body(a)
	if err != nil {
		return &Permanent{fmt.Errorf("alert %s: %w", a.ID, err)}
	}
	ts := strconv.FormatInt(w.now().Unix(), 10)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return &Permanent{err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderID, a.ID)
	req.Header.Set(HeaderTimestamp, ts)
	req.Header.Set(HeaderSignature, Sign(w.key, ts, body))
	resp, err := w.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL may hold the receiver's secret: never log it
		}
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	switch {
	case resp.StatusCode/100 == 2:
		return nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return fmt.Errorf("the receiver answered %s", resp.Status)
	}
	return &Permanent{fmt.Errorf("the receiver refused it: %s", resp.Status)}
}

// redact keeps a URL's scheme and host: its path and query may be a secret.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(unparsable)"
	}
	return u.Scheme + "://" + u.Host + strings.Repeat("/…", min(1, len(u.Path)))
}
