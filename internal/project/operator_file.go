package project

import (
	"crypto/ed25519"
	"fmt"
	"os"
)

// ReadOperatorKeyFile reads an operator private key kept in a file of
// settings/operator.key's form, such as the old key an operator keeps
// to sign the rotation to a new one (wicket node rotate-operator-key
// --old-key). The file must not be readable by group or others.
func ReadOperatorKeyFile(path string) (ed25519.PrivateKey, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("operator key: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("operator key: %s has mode %04o: other users could read it; run chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	seed, err := readKeyFile(path)
	if err != nil {
		return nil, err
	}
	return ed25519.NewKeyFromSeed(seed), nil
}
