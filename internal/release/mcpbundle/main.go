// Command mcpbundle is the step of `make release-snapshot` (and of a
// release) after GoReleaser: it writes the MCPB bundles and dist/server.json
// (internal/release/mcpb, BundleDist), then the OCI image and the Homebrew
// formula, and adds them all to the checksums file (internal/release/outputs).
// It never publishes anything.
package main

import (
	"fmt"
	"os"

	"wicket/internal/release/mcpb"
	"wicket/internal/release/ociimage"
	"wicket/internal/release/outputs"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: mcpbundle DIST SERVER_JSON (after goreleaser, from the repository's top folder)")
		os.Exit(2)
	}
	if err := mcpb.BundleDist(os.Args[1], os.Args[2], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mcpbundle:", err)
		os.Exit(1)
	}
	if err := outputs.Write(os.Args[1], ociimage.CAFile, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mcpbundle:", err)
		os.Exit(1)
	}
}
