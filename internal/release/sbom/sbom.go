// Package sbom writes an SPDX 2.3 JSON software bill of materials for a
// Go binary from the build information the Go toolchain records in it
// (the main module, each dependency module with its version, the Go
// version, the build settings): what syft reports for a Go binary, with
// no scanner to install.
//
// It never reaches the network and never publishes anything.
package sbom

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"time"
)

// Document is the SPDX 2.3 document (the fields wicket writes).
type Document struct {
	SPDXVersion       string         `json:"spdxVersion"`
	DataLicense       string         `json:"dataLicense"`
	SPDXID            string         `json:"SPDXID"`
	Name              string         `json:"name"`
	DocumentNamespace string         `json:"documentNamespace"`
	CreationInfo      CreationInfo   `json:"creationInfo"`
	Packages          []Package      `json:"packages"`
	Relationships     []Relationship `json:"relationships"`
}

// CreationInfo says when and by what the document was made.
type CreationInfo struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

// Package is one module (or the Go standard library).
type Package struct {
	Name             string        `json:"name"`
	SPDXID           string        `json:"SPDXID"`
	VersionInfo      string        `json:"versionInfo"`
	DownloadLocation string        `json:"downloadLocation"`
	FilesAnalyzed    bool          `json:"filesAnalyzed"`
	Checksums        []Checksum    `json:"checksums,omitempty"`
	ExternalRefs     []ExternalRef `json:"externalRefs,omitempty"`
}

// Checksum is a file's digest.
type Checksum struct {
	Algorithm     string `json:"algorithm"`
	ChecksumValue string `json:"checksumValue"`
}

// ExternalRef is a package URL.
type ExternalRef struct {
	ReferenceCategory string `json:"referenceCategory"`
	ReferenceType     string `json:"referenceType"`
	ReferenceLocator  string `json:"referenceLocator"`
}

// Relationship links two elements.
type Relationship struct {
	Element string `json:"spdxElementId"`
	Type    string `json:"relationshipType"`
	Related string `json:"relatedSpdxElement"`
}

var idUnsafe = regexp.MustCompile(`[^A-Za-z0-9.-]`)

// FromBuildInfo is the document of a binary named name (its SHA-256 sum in
// hex) built as bi, made at created.
func FromBuildInfo(bi *debug.BuildInfo, name, sum string, created time.Time) Document {
	d := Document{SPDXVersion: "SPDX-2.3", DataLicense: "CC0-1.0", SPDXID: "SPDXRef-DOCUMENT", Name: name,
		DocumentNamespace: fmt.Sprintf("https://github.com/wicket-trading/wicket/spdx/%s-%s", name, sum),
		CreationInfo:      CreationInfo{Created: created.UTC().Format(time.RFC3339), Creators: []string{"Tool: wicket-sbom"}}}
	mainID := "SPDXRef-Package-" + idUnsafe.ReplaceAllString(bi.Main.Path, "-")
	main := Package{Name: bi.Main.Path, SPDXID: mainID, VersionInfo: bi.Main.Version, DownloadLocation: "NOASSERTION",
		ExternalRefs: []ExternalRef{purl(bi.Main.Path, bi.Main.Version)}}
	if sum != "" {
		main.Checksums = []Checksum{{Algorithm: "SHA256", ChecksumValue: sum}}
	}
	d.Packages = append(d.Packages, main)
	d.Relationships = append(d.Relationships, Relationship{"SPDXRef-DOCUMENT", "DESCRIBES", mainID})
	std := Package{Name: "stdlib", SPDXID: "SPDXRef-Package-stdlib", VersionInfo: bi.GoVersion, DownloadLocation: "https://go.dev/dl/",
		ExternalRefs: []ExternalRef{purl("stdlib", bi.GoVersion)}}
	d.Packages = append(d.Packages, std)
	d.Relationships = append(d.Relationships, Relationship{mainID, "DEPENDS_ON", std.SPDXID})
	for _, m := range bi.Deps {
		if m.Replace != nil {
			m = m.Replace
		}
		id := "SPDXRef-Package-" + idUnsafe.ReplaceAllString(m.Path+"-"+m.Version, "-")
		d.Packages = append(d.Packages, Package{Name: m.Path, SPDXID: id, VersionInfo: m.Version, DownloadLocation: "NOASSERTION",
			ExternalRefs: []ExternalRef{purl(m.Path, m.Version)}})
		d.Relationships = append(d.Relationships, Relationship{mainID, "DEPENDS_ON", id})
	}
	return d
}

func purl(path, version string) ExternalRef {
	return ExternalRef{ReferenceCategory: "PACKAGE-MANAGER", ReferenceType: "purl", ReferenceLocator: "pkg:golang/" + path + "@" + version}
}

// WriteFile writes the document of the Go binary at bin to w.
func WriteFile(w io.Writer, bin, name string, created time.Time) error {
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return fmt.Errorf("%s: %w", bin, err)
	}
	f, err := os.Open(bin)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(FromBuildInfo(bi, name, hex.EncodeToString(h.Sum(nil)), created))
}
