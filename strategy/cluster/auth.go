package cluster

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"wicket/internal/project"
)

// credentialOptions turns o's credential and TLS settings into NATS
// options, checking each file first so that a wrong one is a clear error
// before anything is sent. No error shows a token, a seed or a JWT.
func credentialOptions(o Options) ([]nats.Option, error) {
	n := 0
	for _, c := range []string{o.Token, o.User + o.Password, o.CredsFile, o.NKeyFile} {
		if c != "" {
			n++
		}
	}
	if n > 1 {
		return nil, errors.New("give the research cluster one credential: a token, a user and password, a creds file or an nkey seed file, not several")
	}
	if (o.User == "") != (o.Password == "") {
		return nil, fmt.Errorf("a NATS user needs its password: set both %s and %s, or neither", project.KeyNATSUser, project.KeyNATSPassword)
	}
	var opts []nats.Option
	if o.Token != "" {
		opts = append(opts, nats.Token(o.Token))
	}
	if o.User != "" {
		opts = append(opts, nats.UserInfo(o.User, o.Password))
	}
	if o.CredsFile != "" {
		if err := checkCredsFile(o.CredsFile, time.Now()); err != nil {
			return nil, err
		}
		// The file is read again at each (re)connect: rotated creds apply.
		opts = append(opts, nats.UserCredentials(o.CredsFile))
	}
	if o.NKeyFile != "" {
		opt, err := nats.NkeyOptionFromSeed(o.NKeyFile)
		if err != nil {
			return nil, fmt.Errorf("the NATS nkey seed file %s (%s): %v; it must hold a user seed (the line starting with SU that `nk -gen user` or `nsc` wrote)",
				o.NKeyFile, project.KeyNATSNKey, strings.TrimPrefix(err.Error(), "nats: "))
		}
		opts = append(opts, opt)
	}
	u, err := url.Parse(o.URL)
	if err != nil {
		return nil, fmt.Errorf("research cluster %s: %w", redacted(o.URL), err)
	}
	if o.CAFile != "" {
		if !strings.EqualFold(u.Scheme, "tls") {
			return nil, fmt.Errorf("a CA file for the research cluster (%s) is set, but %s does not use TLS: write it as tls://%s", o.CAFile, redacted(o.URL), u.Host)
		}
		if err := checkCAFile(o.CAFile); err != nil {
			return nil, err
		}
		opts = append(opts, nats.RootCAs(o.CAFile))
	}
	// A tls:// URL makes the client require TLS (1.2 or later), verified
	// against CAFile or the system's roots.
	return opts, nil
}

// CheckTransport refuses, before anything is dialled, a cluster that is
// not on this machine (its host is neither a loopback address nor
// localhost; a name is never resolved) and would be reached without TLS
// or without a credential: anyone on the way, or any client of the
// server, could read every chunk (a strategy's source) and its result.
// o.Insecure (--insecure-cluster) allows it.
func CheckTransport(o Options) error {
	u, err := url.Parse(o.URL)
	if err != nil || u.Hostname() == "" {
		return fmt.Errorf("research cluster %q must be a URL like tls://host:4222", redacted(o.URL))
	}
	if o.Insecure || loopback(u.Hostname()) {
		return nil
	}
	var lacks []string
	if !strings.EqualFold(u.Scheme, "tls") {
		lacks = append(lacks, fmt.Sprintf("without TLS (write it as tls://%s)", u.Host))
	}
	if o.Token == "" && o.User == "" && o.CredsFile == "" && o.NKeyFile == "" {
		lacks = append(lacks, fmt.Sprintf("without a credential (set %s and %s, %s, %s or %s in the environment or secrets.env)",
			project.KeyNATSUser, project.KeyNATSPassword, project.KeyNATSNKey, project.KeyNATSCreds, project.KeyNATSToken))
	}
	if len(lacks) == 0 {
		return nil
	}
	return fmt.Errorf("the research cluster at %s is not on this machine, and would be reached %s: anyone on the network or on the server could read every chunk (the strategy's source) and its results; on a network and a server you trust, pass --insecure-cluster to allow it",
		redacted(o.URL), strings.Join(lacks, " and "))
}

// loopback reports whether host is this machine: a loopback address, or
// localhost.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkCredsFile makes sure path is a NATS .creds file: a user JWT and
// the seed of that user, not expired at now.
func checkCredsFile(path string, now time.Time) error {
	where := fmt.Sprintf("the NATS creds file %s (%s)", path, project.KeyNATSCreds)
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is named already
		}
		return fmt.Errorf("%s: %v; point it at the .creds file `nsc` wrote for the cluster's user", where, err)
	}
	defer clear(data)
	if !strings.Contains(string(data), "-----BEGIN NATS USER JWT-----") {
		return fmt.Errorf("%s is not a creds file (no NATS USER JWT block in it); point it at the .creds file `nsc` wrote for the cluster's user (an nkey seed file goes in %s)", where, project.KeyNATSNKey)
	}
	token, err := nkeys.ParseDecoratedJWT(data)
	if err != nil {
		return fmt.Errorf("%s holds no readable user JWT; write it again with `nsc generate creds`", where)
	}
	claims, err := jwt.DecodeUserClaims(token)
	if err != nil {
		return fmt.Errorf("%s holds no valid user JWT; write it again with `nsc generate creds`", where)
	}
	kp, err := nkeys.ParseDecoratedUserNKey(data)
	if err != nil {
		return fmt.Errorf("%s holds no user nkey seed; write it again with `nsc generate creds`", where)
	}
	defer kp.Wipe()
	pub, err := kp.PublicKey()
	if err != nil || pub != claims.Subject {
		return fmt.Errorf("%s: its seed is not the key of its user JWT; write it again with `nsc generate creds`", where)
	}
	if claims.Expires > 0 && now.Unix() >= claims.Expires {
		return fmt.Errorf("%s: the user JWT expired at %s; ask the cluster's operator for new credentials", where, time.Unix(claims.Expires, 0).UTC().Format(time.RFC3339))
	}
	return nil
}

// checkCAFile makes sure path is a PEM file of certificates only.
func checkCAFile(path string) error {
	where := "the research cluster's CA file " + path
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("%s: %v; give the PEM certificate of the CA that signed the NATS server's certificate", where, err)
	}
	certs := 0
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if strings.Contains(b.Type, "PRIVATE KEY") {
			clear(data)
			return fmt.Errorf("%s holds a private key; give only the CA's certificate, and keep the key off this machine", where)
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return fmt.Errorf("%s: a certificate in it is malformed: %v", where, err)
		}
		certs++
	}
	if certs == 0 {
		return fmt.Errorf("%s holds no PEM certificate (-----BEGIN CERTIFICATE-----); give the certificate of the CA that signed the NATS server's certificate", where)
	}
	return nil
}

// dialError explains why the server could not be reached, and what to do.
func dialError(o Options, timeout time.Duration, err error) error {
	where := redacted(o.URL)
	tlsURL := strings.HasPrefix(strings.ToLower(o.URL), "tls://")
	var (
		unknownCA x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		hint      string
	)
	credential := ""
	switch {
	case o.Token != "":
		credential = "the token in " + project.KeyNATSToken
	case o.User != "":
		credential = "the user and password in " + project.KeyNATSUser + " and " + project.KeyNATSPassword
	case o.CredsFile != "":
		credential = "the creds file in " + project.KeyNATSCreds
	case o.NKeyFile != "":
		credential = "the nkey seed file in " + project.KeyNATSNKey
	}
	switch {
	case errors.Is(err, nats.ErrAuthorization) && credential == "":
		hint = fmt.Sprintf("the server wants a credential: set %s, %s and %s, %s or %s in the environment or secrets.env", project.KeyNATSToken, project.KeyNATSUser, project.KeyNATSPassword, project.KeyNATSCreds, project.KeyNATSNKey)
	case errors.Is(err, nats.ErrAuthorization):
		hint = fmt.Sprintf("the server refused %s: check it is one the server's configuration admits", credential)
	case errors.Is(err, nats.ErrAuthExpired), errors.Is(err, nats.ErrAccountAuthExpired), errors.Is(err, nats.ErrAuthRevoked):
		hint = fmt.Sprintf("the server no longer accepts %s: ask the cluster's operator for new credentials", credential)
	case errors.Is(err, nats.ErrSecureConnWanted):
		hint = fmt.Sprintf("the URL asks for TLS but the server does not offer it: enable TLS on nats-server, or write the cluster as nats://%s", hostPort(o.URL))
	case !tlsURL && (errors.Is(err, nats.ErrTLS) || errors.As(err, &unknownCA) || errors.As(err, &hostname)):
		hint = fmt.Sprintf("the server requires TLS and its certificate is not trusted here: write the cluster as tls://%s, and if a private CA signed the certificate, give its certificate as [research] cluster_ca (--cluster-ca on wicket worker)", hostPort(o.URL))
	case errors.As(err, &unknownCA) && o.CAFile == "":
		hint = "the server's certificate is not signed by a CA this machine trusts: if a private CA signed it, give the CA's certificate as [research] cluster_ca (--cluster-ca on wicket worker)"
	case errors.As(err, &unknownCA):
		hint = fmt.Sprintf("the server's certificate is not signed by the CA in %s: give the certificate of the CA that signed it", o.CAFile)
	case errors.As(err, &hostname):
		hint = fmt.Sprintf("the server's certificate is not for %s: connect by a name or address the certificate lists", hostOnly(o.URL))
	case errors.As(err, &invalid):
		hint = "the server's certificate is not valid now (expired, or not a server certificate): renew it"
	case errors.Is(err, nats.ErrTLS):
		hint = "the TLS handshake failed: check the server's TLS setup"
	default:
		hint = "check the address, that nats-server runs there with JetStream on (-js), and its credentials in secrets.env"
	}
	return fmt.Errorf("cannot reach the research cluster at %s within %s: %w; %s", where, timeout, err, hint)
}

func hostPort(s string) string {
	if u, err := url.Parse(s); err == nil && u.Host != "" {
		return u.Host
	}
	return "HOST:PORT"
}

func hostOnly(s string) string {
	if u, err := url.Parse(s); err == nil && u.Hostname() != "" {
		return u.Hostname()
	}
	return "this host"
}
