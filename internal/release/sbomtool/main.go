// Command sbomtool writes the SPDX SBOM of one Go binary for GoReleaser's
// sboms step (internal/release/sbom): sbomtool BINARY DOCUMENT CREATED,
// CREATED being the commit's date (RFC 3339), so the document is the same
// for the same commit; a snapshot made where GoReleaser reads no commit
// passes the zero time, and then the document is dated now. It never
// publishes anything.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"wicket/internal/release/sbom"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: sbomtool BINARY DOCUMENT CREATED")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3]); err != nil {
		fmt.Fprintln(os.Stderr, "sbomtool:", err)
		os.Exit(1)
	}
}

func run(bin, doc, created string) (err error) {
	at, err := time.Parse(time.RFC3339, created)
	if err != nil {
		return fmt.Errorf("CREATED: %w", err)
	}
	if at.Year() <= 1 {
		at = time.Now()
	}
	f, err := os.Create(doc)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	return sbom.WriteFile(f, bin, filepath.Base(doc), at)
}
