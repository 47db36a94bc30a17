package clustertest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// writeSecret writes a file only its owner may read, in the test's
// temporary directory, and returns its path.
func writeSecret(t testing.TB, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// NKeyUser makes up an nkey user for this test and writes its seed to a
// 0600 file. The server trusts it after ServerWith(t, u.Allow).
type NKeyUser struct {
	Public   string // the user's public key (U...)
	SeedFile string
	Seed     string // for tests that assert it never shows
}

// NewNKeyUser makes up a user nkey.
func NewNKeyUser(t testing.TB) NKeyUser {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	seed, err := kp.Seed()
	if err != nil {
		t.Fatal(err)
	}
	return NKeyUser{Public: pub, Seed: string(seed), SeedFile: writeSecret(t, "user.nk", append(seed, '\n'))}
}

// Allow lets this user (and only the users allowed so) connect.
func (u NKeyUser) Allow(o *server.Options) {
	o.Nkeys = append(o.Nkeys, &server.NkeyUser{Nkey: u.Public})
}

// Operator is a NATS operator made up for a test, with one account that
// may use JetStream and a system account. A server set up with
// ServerWith(t, op.Trust) runs in operator mode with a memory resolver
// and admits the users of op's account (op.UserCreds).
type Operator struct {
	claims   *jwt.OperatorClaims
	account  nkeys.KeyPair
	accounts map[string]string // public key → account JWT
	sysPub   string
}

// NewOperator makes up an operator, its account and its system account.
func NewOperator(t testing.TB) *Operator {
	t.Helper()
	okp, err := nkeys.CreateOperator()
	must(t, err)
	opub, err := okp.PublicKey()
	must(t, err)
	op := &Operator{claims: jwt.NewOperatorClaims(opub), accounts: map[string]string{}}
	op.claims.Name = "wicket-test"
	ojwt, err := op.claims.Encode(okp)
	must(t, err)
	if op.claims, err = jwt.DecodeOperatorClaims(ojwt); err != nil {
		t.Fatal(err)
	}
	account := func(name string, js bool) (nkeys.KeyPair, string) {
		akp, err := nkeys.CreateAccount()
		must(t, err)
		apub, err := akp.PublicKey()
		must(t, err)
		ac := jwt.NewAccountClaims(apub)
		ac.Name = name
		if js {
			ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
		}
		ajwt, err := ac.Encode(okp)
		must(t, err)
		op.accounts[apub] = ajwt
		return akp, apub
	}
	op.account, _ = account("wicket", true)
	_, op.sysPub = account("SYS", false)
	return op
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Trust puts the server in operator mode under op.
func (op *Operator) Trust(o *server.Options) {
	r := &server.MemAccResolver{}
	for pub, j := range op.accounts {
		r.Store(pub, j)
	}
	o.TrustedOperators = []*jwt.OperatorClaims{op.claims}
	o.AccountResolver = r
	o.SystemAccount = op.sysPub
}

// UserCreds makes up a user of op's account and writes its .creds file
// (the user JWT and seed, as nsc writes it) with mode 0600; it returns
// the file and the seed, for tests that assert the seed never shows.
func (op *Operator) UserCreds(t testing.TB) (file, seed string) {
	t.Helper()
	return op.UserCredsWith(t, nil)
}

// UserCredsWith is UserCreds with the user's claims changed by edit
// first (an expiry, say); edit may be nil.
func (op *Operator) UserCredsWith(t testing.TB, edit func(*jwt.UserClaims)) (file, seed string) {
	t.Helper()
	ukp, err := nkeys.CreateUser()
	must(t, err)
	upub, err := ukp.PublicKey()
	must(t, err)
	useed, err := ukp.Seed()
	must(t, err)
	uc := jwt.NewUserClaims(upub)
	uc.Name = "wicket-test-user"
	if edit != nil {
		edit(uc)
	}
	ujwt, err := uc.Encode(op.account)
	must(t, err)
	creds, err := jwt.FormatUserConfig(ujwt, useed)
	must(t, err)
	return writeSecret(t, "user.creds", creds), string(useed)
}
