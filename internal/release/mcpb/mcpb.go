// Package mcpb builds wicket's MCP Bundles (MCPB, manifest version 0.4):
// one zip per platform holding manifest.json and the wicket binary under
// server/, which a desktop client installs in one step and runs as
// `wicket --project DIR mcp` over stdio, the project being the one
// setting the user is asked for. It also names each bundle as a package
// of server.json for the MCP registry.
//
// It never reaches the network and never publishes anything; it reads
// only the binary it is handed.
package mcpb

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"time"

	"wicket/internal/buildinfo"
)

// ManifestVersion is the MCPB manifest version the bundles conform to
// (testdata/mcpb holds its schema).
const ManifestVersion = "0.4"

// Repository is wicket's source repository; a release's bundles are
// downloaded from its releases.
const Repository = "https://github.com/wicket-trading/wicket"

// platforms maps a Go GOOS to MCPB's platform name.
var platforms = map[string]string{"linux": "linux", "darwin": "darwin", "windows": "win32"}

// Targets are the GOOS/GOARCH pairs a release builds (.goreleaser.yaml),
// one bundle each.
var Targets = [][2]string{
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"linux", "amd64"}, {"linux", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// Binary is the binary's file name in a bundle for goos.
func Binary(goos string) string {
	if goos == "windows" {
		return "wicket.exe"
	}
	return "wicket"
}

// Name is the bundle's file name for a version and platform.
func Name(version, goos, goarch string) string {
	return fmt.Sprintf("wicket_%s_%s_%s.mcpb", version, goos, goarch)
}

// Manifest is manifest.json for the bundle of version on goos.
func Manifest(version, goos string) ([]byte, error) {
	platform, ok := platforms[goos]
	if !ok {
		return nil, fmt.Errorf("mcpb: no MCPB platform for GOOS %q (linux, darwin and windows have one)", goos)
	}
	if version == "" {
		return nil, fmt.Errorf("mcpb: a bundle needs the release's version")
	}
	entry := "server/" + Binary(goos)
	m := map[string]any{
		"manifest_version": ManifestVersion,
		"name":             "wicket",
		"display_name":     buildinfo.Title,
		"version":          version,
		"description":      buildinfo.Description,
		"author":           map[string]any{"name": "wicket-trading", "url": "https://github.com/wicket-trading"},
		"repository":       map[string]any{"type": "git", "url": Repository},
		"homepage":         Repository + "#readme",
		"documentation":    Repository + "/blob/main/docs/operations.md",
		"server": map[string]any{
			"type":        "binary",
			"entry_point": entry,
			"mcp_config": map[string]any{
				"command": "${__dirname}/" + entry,
				"args":    []string{"--project", "${user_config.project}", "mcp"},
			},
		},
		"user_config": map[string]any{
			"project": map[string]any{
				"type":  "directory",
				"title": "wicket project",
				"description": "The project folder wicket serves (made by `wicket init DIR`): its strategies, bar store, " +
					"settings and trace. Trading needs a node the operator started there.",
				"required": true,
			},
		},
		"compatibility": map[string]any{"platforms": []string{platform}},
		"keywords":      []string{"trading", "backtesting", "starlark", "strategies"},
	}
	return json.MarshalIndent(m, "", "  ")
}

// Write writes the bundle of version for goos to w: manifest.json and the
// binary read from bin, executable, both dated at (zip entries carry a
// time; a release passes its commit's, so a bundle is reproducible).
func Write(w io.Writer, version, goos string, bin io.Reader, at time.Time) error {
	manifest, err := Manifest(version, goos)
	if err != nil {
		return err
	}
	z := zip.NewWriter(w)
	put := func(name string, mode fs.FileMode, r io.Reader) error {
		h := &zip.FileHeader{Name: name, Method: zip.Deflate, Modified: at}
		h.SetMode(mode)
		f, err := z.CreateHeader(h)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, r)
		return err
	}
	if err := put("manifest.json", 0o644, bytes.NewReader(manifest)); err != nil {
		return fmt.Errorf("mcpb: manifest.json: %w", err)
	}
	if err := put("server/"+Binary(goos), 0o755, bin); err != nil {
		return fmt.Errorf("mcpb: the binary: %w", err)
	}
	return z.Close()
}

// Package is the bundle's entry in server.json's packages: downloaded
// from the release tagged v<version>, checked against sha256 (hex), run
// over stdio.
func Package(version, goos, goarch, sha256 string) map[string]any {
	p := map[string]any{
		"registryType": "mcpb",
		"identifier":   fmt.Sprintf("%s/releases/download/v%s/%s", Repository, version, Name(version, goos, goarch)),
		"version":      version,
		"transport":    map[string]any{"type": "stdio"},
	}
	if sha256 != "" {
		p["fileSha256"] = sha256
	}
	return p
}
