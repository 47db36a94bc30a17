package release

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"os"
	"regexp"
	"runtime/debug"
	"testing"
	"time"

	"wicket/internal/release/sbom"
)

// TestSBOM writes the SPDX document of a real Go binary (this test's) and
// checks it against what the binary records: every module with its
// version and package URL, the binary's sum, unique SPDX ids, and the
// document describing the main module, which depends on each.
func TestSBOM(t *testing.T) {
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := buildinfo.ReadFile(bin); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	created := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if err := sbom.WriteFile(&out, bin, "wicket_1.2.3_linux_amd64.sbom.json", created); err != nil {
		t.Fatal(err)
	}
	var doc sbom.Document
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.SPDXVersion != "SPDX-2.3" || doc.DataLicense != "CC0-1.0" || doc.SPDXID != "SPDXRef-DOCUMENT" || doc.CreationInfo.Created != "2026-12-01T00:00:00Z" {
		t.Fatalf("document header: %+v", doc)
	}
	body, _ := os.ReadFile(bin)
	sum := sha256.Sum256(body)
	if p := doc.Packages[0]; len(p.Checksums) != 1 || p.Checksums[0].ChecksumValue != hex.EncodeToString(sum[:]) {
		t.Errorf("main package %+v, want the binary's sum %x", p, sum)
	}

	// The modules, from build information as a release binary records it.
	bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "wicket", Version: "v1.2.3"}, Deps: []*debug.Module{
		{Path: "github.com/shopspring/decimal", Version: "v1.4.0", Sum: "h1:x"},
		{Path: "go.starlark.net", Version: "v0.0.0-20250101000000-abcdef123456"},
		{Path: "example.com/forked", Version: "v1.0.0", Replace: &debug.Module{Path: "example.com/fork", Version: "v1.0.1"}},
	}}
	doc = sbom.FromBuildInfo(bi, "wicket_1.2.3_linux_amd64.sbom.json", hex.EncodeToString(sum[:]), created)
	ids := map[string]bool{}
	idShape := regexp.MustCompile(`^SPDXRef-[A-Za-z0-9.-]+$`)
	byName := map[string]sbom.Package{}
	for _, p := range doc.Packages {
		if ids[p.SPDXID] || !idShape.MatchString(p.SPDXID) {
			t.Errorf("SPDX id %q repeated or malformed", p.SPDXID)
		}
		ids[p.SPDXID] = true
		byName[p.Name] = p
	}
	if main := doc.Packages[0]; main.Name != "wicket" || main.VersionInfo != "v1.2.3" {
		t.Errorf("main package %+v", main)
	}
	if _, ok := byName["example.com/forked"]; ok || len(doc.Packages) != 5 {
		t.Errorf("a replaced module is listed by its original path, or packages are missing: %d packages", len(doc.Packages))
	}
	for _, m := range bi.Deps {
		if m.Replace != nil {
			m = m.Replace
		}
		p, ok := byName[m.Path]
		if !ok || p.VersionInfo != m.Version || p.ExternalRefs[0].ReferenceLocator != "pkg:golang/"+m.Path+"@"+m.Version {
			t.Errorf("module %s@%s: %+v", m.Path, m.Version, p)
		}
	}
	if byName["stdlib"].VersionInfo != bi.GoVersion {
		t.Errorf("stdlib: %+v, want %s", byName["stdlib"], bi.GoVersion)
	}
	describes, depends := 0, 0
	for _, r := range doc.Relationships {
		if !ids[r.Related] {
			t.Errorf("relationship to an unknown element: %+v", r)
		}
		switch r.Type {
		case "DESCRIBES":
			describes++
		case "DEPENDS_ON":
			depends++
		}
	}
	if describes != 1 || depends != len(doc.Packages)-1 {
		t.Errorf("%d DESCRIBES and %d DEPENDS_ON over %d packages", describes, depends, len(doc.Packages))
	}
}
