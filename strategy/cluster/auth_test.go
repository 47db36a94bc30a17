package cluster_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"

	"wicket/internal/testkit"
	"wicket/strategy/cluster"
	"wicket/strategy/clustertest"
	"wicket/strategy/research"
)

// dialErr dials o and returns the error, checking that the answer came
// within the connect timeout's bound (the context outlasts it by far)
// and shows none of the secrets.
func dialErr(t *testing.T, o cluster.Options, secrets ...string) error {
	t.Helper()
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = 2 * time.Second
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	d, err := cluster.Dial(ctx, cluster.DispatcherOptions{Options: o})
	if err == nil {
		d.Close()
		t.Fatalf("dial %s succeeded", o.URL)
	}
	if ctx.Err() != nil {
		t.Fatalf("dial %s ended by the context, not its own bound: %v", o.URL, err)
	}
	t.Logf("%s: %v", o.URL, err)
	for _, s := range secrets {
		if s != "" && strings.Contains(err.Error(), s) {
			t.Fatalf("the error shows a secret: %v", err)
		}
	}
	return err
}

func wantErr(t *testing.T, what string, err error, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(p)) {
			t.Errorf("%s: %v\nwant it to mention %q", what, err, p)
		}
	}
}

func dialOK(t *testing.T, o cluster.Options) {
	t.Helper()
	d, err := cluster.Dial(t.Context(), cluster.DispatcherOptions{Options: o})
	if err != nil {
		t.Fatalf("dial %s: %v", o.URL, err)
	}
	d.Close()
}

func TestNKeyFromOptions(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	u := clustertest.NewNKeyUser(t)
	url := clustertest.ServerWith(t, u.Allow)
	stranger := clustertest.NewNKeyUser(t) // a well-formed seed the server does not know
	secrets := []string{u.Seed, stranger.Seed}

	dialOK(t, cluster.Options{Key: testKey, URL: url, NKeyFile: u.SeedFile})

	err := dialErr(t, cluster.Options{Key: testKey, URL: url}, secrets...)
	wantErr(t, "without a seed", err, "cannot reach the research cluster", "authorization violation", "the server wants a credential", "WICKET_NATS_NKEY_FILE")
	err = dialErr(t, cluster.Options{Key: testKey, URL: url, NKeyFile: stranger.SeedFile}, secrets...)
	wantErr(t, "with another user's seed", err, "authorization violation", "refused the nkey seed file in WICKET_NATS_NKEY_FILE")

	dir := t.TempDir()
	for _, tt := range []struct{ name, text, want string }{
		{"empty.nk", "", "no nkey seed found"},
		{"junk.nk", "hello\n", "no nkey seed found"},
		{"broken.nk", u.Seed[:len(u.Seed)-4] + "\n", "nkeys"},
		{"creds.nk", "-----BEGIN USER NKEY SEED-----\nSUNOTASEED\n------END USER NKEY SEED------\n", "nkeys"},
	} {
		file := filepath.Join(dir, tt.name)
		if err := os.WriteFile(file, []byte(tt.text), 0o600); err != nil {
			t.Fatal(err)
		}
		err := dialErr(t, cluster.Options{Key: testKey, URL: url, NKeyFile: file}, secrets...)
		wantErr(t, tt.name, err, "the NATS nkey seed file "+file, tt.want, "user seed")
		if strings.Contains(err.Error(), "SUNOTASEED") {
			t.Errorf("%s: the error shows the file's content: %v", tt.name, err)
		}
	}
	err = dialErr(t, cluster.Options{Key: testKey, URL: url, NKeyFile: filepath.Join(dir, "missing.nk")}, secrets...)
	wantErr(t, "a missing seed file", err, "missing.nk", "no such file")
}

func TestCredsFromOptions(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	op := clustertest.NewOperator(t)
	url := clustertest.ServerWith(t, op.Trust)
	creds, seed := op.UserCreds(t)
	strangerCreds, strangerSeed := clustertest.NewOperator(t).UserCreds(t) // an account the server does not know
	expired, expiredSeed := op.UserCredsWith(t, func(c *jwt.UserClaims) { c.Expires = time.Now().Add(-time.Hour).Unix() })
	u := clustertest.NewNKeyUser(t)
	secrets := []string{seed, strangerSeed, expiredSeed, u.Seed}

	err := dialErr(t, cluster.Options{Key: testKey, URL: url}, secrets...)
	wantErr(t, "without creds", err, "authorization violation", "the server wants a credential", "WICKET_NATS_CREDS_FILE")
	err = dialErr(t, cluster.Options{Key: testKey, URL: url, CredsFile: strangerCreds}, secrets...)
	wantErr(t, "another operator's creds", err, "authorization violation", "refused the creds file in WICKET_NATS_CREDS_FILE")
	err = dialErr(t, cluster.Options{Key: testKey, URL: url, CredsFile: expired}, secrets...)
	wantErr(t, "expired creds", err, "the user JWT expired at", "new credentials")
	err = dialErr(t, cluster.Options{Key: testKey, URL: url, CredsFile: u.SeedFile}, secrets...)
	wantErr(t, "an nkey seed file as creds", err, "is not a creds file", "WICKET_NATS_NKEY_FILE")
	err = dialErr(t, cluster.Options{Key: testKey, URL: url, CredsFile: filepath.Join(t.TempDir(), "missing.creds")}, secrets...)
	wantErr(t, "a missing creds file", err, "missing.creds", "no such file")

	// A creds file whose seed is not its JWT's user.
	good, _ := os.ReadFile(creds)
	other, _ := os.ReadFile(strangerCreds)
	jwtPart := string(good[:strings.Index(string(good), "-----BEGIN USER NKEY SEED-----")])
	seedPart := string(other[strings.Index(string(other), "-----BEGIN USER NKEY SEED-----"):])
	mixed := filepath.Join(t.TempDir(), "mixed.creds")
	if err := os.WriteFile(mixed, []byte(jwtPart+seedPart), 0o600); err != nil {
		t.Fatal(err)
	}
	err = dialErr(t, cluster.Options{Key: testKey, URL: url, CredsFile: mixed}, secrets...)
	wantErr(t, "a seed from another user", err, "its seed is not the key of its user JWT")
	// A JWT that is not one.
	broken := filepath.Join(t.TempDir(), "broken.creds")
	if err := os.WriteFile(broken, []byte(strings.Replace(jwtPart, ".", "!", 1)+string(good[len(jwtPart):])), 0o600); err != nil {
		t.Fatal(err)
	}
	err = dialErr(t, cluster.Options{Key: testKey, URL: url, CredsFile: broken}, secrets...)
	wantErr(t, "a broken JWT", err, "holds no valid user JWT")

	// With the creds, a sweep runs on a worker that holds them too: the
	// account may use JetStream (the stream, the consumer, the bars store).
	o := cluster.Options{Key: testKey, URL: url, CredsFile: creds}
	d, log := joinWorker(t, o)
	p := demoProject(t)
	ctx := t.Context()
	req := sweepReq(t, "SPY@1d")
	want, err := research.NewLocal(research.Config{ProofSeed: fixedProofSeed, Project: p, Pool: newPool(t)}).Sweep(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := research.NewLocal(research.Config{ProofSeed: fixedProofSeed, Project: p, Pool: newPool(t), Chunks: d}).Sweep(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(want)
	b, _ := json.Marshal(got)
	if got.Evaluated != 100 || got.Failed != 0 || string(a) != string(b) {
		t.Errorf("the sweep with creds differs from the in-process sweep:\n%s\n%s", a, b)
	}
	if l := log.String(); !strings.Contains(l, "answered") || strings.Contains(l, seed) {
		t.Errorf("the worker's log shows the seed, or no answered chunk:\n%s", l)
	}
}

// logBuf is a worker's log; joined is closed when it has joined.
type logBuf struct {
	mu     sync.Mutex
	b      strings.Builder
	joined chan struct{}
	once   sync.Once
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Write(p)
	if strings.Contains(l.b.String(), "joined the research cluster") {
		l.once.Do(func() { close(l.joined) })
	}
	return len(p), nil
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// joinWorker starts a one-worker cluster worker in this process with o,
// waits until it has joined (first, as an operator starts them: the
// account's first connection is the worker's), then dials a dispatcher.
func joinWorker(t *testing.T, o cluster.Options) (*cluster.Dispatcher, *logBuf) {
	t.Helper()
	return joinWorkerCaching(t, o, t.TempDir())
}

// joinWorkerCaching is joinWorker with the worker's bars cache in cache.
func joinWorkerCaching(t *testing.T, o cluster.Options, cache string) (*cluster.Dispatcher, *logBuf) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	log := &logBuf{joined: make(chan struct{})}
	served := make(chan error, 1)
	go func() {
		served <- cluster.Serve(ctx, cluster.WorkerOptions{Options: o, Pool: newPool(t), CacheDir: cache, Log: log})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
	})
	select {
	case <-log.joined:
	case err := <-served:
		served <- err
		t.Fatalf("the worker did not join: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the worker did not join in 30s")
	}
	d, err := cluster.Dial(ctx, cluster.DispatcherOptions{Options: o, WaitWorkers: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, log
}

func TestTLSFromOptions(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	ca := clustertest.NewCA(t)
	url := clustertest.ServerWith(t, ca.RequireTLS(t))
	if !strings.HasPrefix(url, "tls://127.0.0.1:") {
		t.Fatalf("the TLS server's URL is %s", url)
	}
	hostPort := strings.TrimPrefix(url, "tls://")

	dialOK(t, cluster.Options{Key: testKey, URL: url, CAFile: ca.File})
	dialOK(t, cluster.Options{Key: testKey, URL: "tls://localhost:" + hostPort[strings.LastIndex(hostPort, ":")+1:], CAFile: ca.File})

	err := dialErr(t, cluster.Options{Key: testKey, URL: url})
	wantErr(t, "tls:// without the CA", err, "cannot reach the research cluster at "+url, "certificate signed by unknown authority", "cluster_ca")
	err = dialErr(t, cluster.Options{Key: testKey, URL: url, CAFile: clustertest.NewCA(t).File})
	wantErr(t, "tls:// with another CA", err, "certificate signed by unknown authority", "not signed by the CA in")
	err = dialErr(t, cluster.Options{Key: testKey, URL: "nats://" + hostPort})
	wantErr(t, "nats:// to a TLS server", err, "the server requires TLS", "write the cluster as tls://"+hostPort)
	err = dialErr(t, cluster.Options{Key: testKey, URL: "nats://" + hostPort, CAFile: ca.File})
	wantErr(t, "nats:// with a CA file", err, "does not use TLS", "tls://"+hostPort)

	plain := clustertest.Server(t)
	err = dialErr(t, cluster.Options{Key: testKey, URL: "tls://" + strings.TrimPrefix(plain, "nats://"), CAFile: ca.File})
	wantErr(t, "tls:// to a plain server", err, "does not offer it", "nats://")

	// CA files that are not one.
	dir := t.TempDir()
	for _, tt := range []struct{ name, text, want string }{
		{"empty.pem", "", "holds no PEM certificate"},
		{"junk.pem", "not a certificate\n", "holds no PEM certificate"},
		{"key.pem", "-----BEGIN EC PRIVATE KEY-----\nTUFERVVQ\n-----END EC PRIVATE KEY-----\n", "holds a private key"},
		{"bad.pem", "-----BEGIN CERTIFICATE-----\nTUFERVVQ\n-----END CERTIFICATE-----\n", "malformed"},
	} {
		file := filepath.Join(dir, tt.name)
		if err := os.WriteFile(file, []byte(tt.text), 0o600); err != nil {
			t.Fatal(err)
		}
		err := dialErr(t, cluster.Options{Key: testKey, URL: url, CAFile: file})
		wantErr(t, tt.name, err, "the research cluster's CA file "+file, tt.want)
		if strings.Contains(err.Error(), "TUFERVVQ") {
			t.Errorf("%s: the error shows the file's content: %v", tt.name, err)
		}
	}
	err = dialErr(t, cluster.Options{Key: testKey, URL: url, CAFile: filepath.Join(dir, "missing.pem")})
	wantErr(t, "a missing CA file", err, "missing.pem", "no such file")
}

// TestTLSWithToken: the token travels inside TLS, and a TLS server that
// wants one refuses a client without it.
func TestTLSWithToken(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	ca := clustertest.NewCA(t)
	token := testkit.Secret(t, 16) // made up for this run
	tlsOpts := ca.RequireTLS(t)
	url := clustertest.ServerWith(t, func(o *server.Options) { tlsOpts(o); o.Authorization = token })
	dialOK(t, cluster.Options{Key: testKey, URL: url, CAFile: ca.File, Token: token})
	err := dialErr(t, cluster.Options{Key: testKey, URL: url, CAFile: ca.File}, token)
	wantErr(t, "TLS without the token", err, "authorization violation", "WICKET_NATS_TOKEN")
}

// TestSilentServerIsBounded: a server that takes the connection and says
// nothing (no NATS INFO, no TLS handshake) is an error within the
// connect timeout, for nats:// and tls:// alike.
func TestSilentServerIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	}()
	for _, scheme := range []string{"nats://", "tls://"} {
		o := cluster.Options{Key: testKey, URL: scheme + ln.Addr().String(), ConnectTimeout: time.Second}
		if scheme == "tls://" {
			o.CAFile = clustertest.NewCA(t).File
		}
		err := dialErr(t, o)
		wantErr(t, scheme+" to a silent server", err, "cannot reach the research cluster at "+o.URL+" within 1s")
	}
}

// TestUserPasswordFromOptions: a server with a user and password admits
// a sweep that gives both, and refuses one without them or with another
// password, saying which keys to set; a user without its password is an
// error before anything is sent.
func TestUserPasswordFromOptions(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster tests are skipped with -short")
	}
	password := testkit.Secret(t, 16) // made up for this run
	url := clustertest.ServerWith(t, func(o *server.Options) { o.Username, o.Password = "wicket", password })
	dialOK(t, cluster.Options{Key: testKey, URL: url, User: "wicket", Password: password})
	err := dialErr(t, cluster.Options{Key: testKey, URL: url}, password)
	wantErr(t, "without the user", err, "authorization violation", "the server wants a credential", "WICKET_NATS_USER", "WICKET_NATS_PASSWORD")
	err = dialErr(t, cluster.Options{Key: testKey, URL: url, User: "wicket", Password: password + "x"}, password)
	wantErr(t, "another password", err, "refused the user and password in WICKET_NATS_USER and WICKET_NATS_PASSWORD")
	err = dialErr(t, cluster.Options{Key: testKey, URL: url, User: "wicket"}, password)
	wantErr(t, "no password", err, "needs its password", "WICKET_NATS_PASSWORD")
	err = dialErr(t, cluster.Options{Key: testKey, URL: url, User: "wicket", Password: password, Token: "t"}, password)
	wantErr(t, "two credentials", err, "one credential")
}
