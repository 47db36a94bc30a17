package project

import (
	"fmt"
	"net/url"
	"strings"
)

// The secrets a research cluster's NATS connection may need, read from
// the environment or secrets.env like every key. One of them at most:
// a token, a user and password, a creds file (JWT and nkey seed, as
// `nsc` writes it) or an nkey seed file. The file keys hold a path,
// never the secret itself.
const (
	KeyNATSToken    = "WICKET_NATS_TOKEN"
	KeyNATSUser     = "WICKET_NATS_USER"
	KeyNATSPassword = "WICKET_NATS_PASSWORD"
	KeyNATSCreds    = "WICKET_NATS_CREDS_FILE"
	KeyNATSNKey     = "WICKET_NATS_NKEY_FILE"
)

// KeyCluster is the research cluster's own key: every chunk, answer and
// heartbeat on the cluster is signed with it (HMAC-SHA256), so a client
// of the NATS server that does not hold it can neither forge nor alter
// one. `wicket init` makes one; every machine of a cluster holds the same.
const KeyCluster = "WICKET_CLUSTER_KEY"

// natsKeys are the NATS credential keys, listed once set.
var natsKeys = []string{KeyNATSToken, KeyNATSUser, KeyNATSPassword, KeyNATSCreds, KeyNATSNKey}

// ValidateClusterURL checks a research cluster address: nats:// or
// tls:// (TLS), a host, an optional port, and no user or password in it
// (credentials go in secrets.env). Empty is valid: no cluster.
func ValidateClusterURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return fmt.Errorf("research cluster %q must be a URL like nats://host:4222 or tls://host:4222", s)
	}
	switch strings.ToLower(u.Scheme) {
	case "nats", "tls":
	default:
		return fmt.Errorf("research cluster %q: the scheme must be nats:// or tls://, not %s://", s, u.Scheme)
	}
	if u.User != nil {
		return fmt.Errorf("research cluster %q has credentials in it; put a token in %s (or a creds file path in %s) in secrets.env instead", redactURL(u), KeyNATSToken, KeyNATSCreds)
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return fmt.Errorf("research cluster %q must be just scheme://host:port", s)
	}
	return nil
}

// ValidateClusterCA checks the CA file setting against the cluster's
// address: a CA is for TLS, so the cluster must be tls:// when both are
// set (--cluster may give the address instead). The file itself is read
// when the cluster is reached.
func ValidateClusterCA(cluster, ca string) error {
	if ca == "" {
		return nil
	}
	if strings.TrimSpace(ca) != ca || strings.ContainsRune(ca, 0) {
		return fmt.Errorf("%q is not a file name", ca)
	}
	if u, err := url.Parse(cluster); err == nil && cluster != "" && !strings.EqualFold(u.Scheme, "tls") {
		return fmt.Errorf("a CA file is for a TLS cluster, but the cluster is %s: write it as tls://%s", redactURL(u), u.Host)
	}
	return nil
}

func redactURL(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}
