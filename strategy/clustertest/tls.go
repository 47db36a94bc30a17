package clustertest

import (
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"wicket/internal/testcert"
)

// CA is a certificate authority made up for one test (testcert.CA) that
// can put a NATS server behind TLS.
type CA struct{ *testcert.CA }

// NewCA makes a CA valid for an hour; its certificate is in ca.File.
func NewCA(t testing.TB) *CA { return &CA{testcert.NewCA(t)} }

// RequireTLS has the server require TLS with a certificate ca signed:
// ServerWith(t, ca.RequireTLS(t)) returns its tls:// URL.
func (ca *CA) RequireTLS(t testing.TB) func(*server.Options) {
	cfg := ca.ServerTLS(t)
	return func(o *server.Options) {
		o.TLSConfig, o.TLS, o.TLSTimeout = cfg, true, 2
	}
}
