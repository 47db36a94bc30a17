package release

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"wicket/internal/buildinfo"
)

// root is the repository's top folder, two up from this package.
var root = filepath.Join("..", "..")

// schemaURL is the $id of the committed schema; server.json must name it.
const schemaURL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"

func readJSON(t *testing.T, path string) any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc
}

func compile(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schemaURL, readJSON(t, filepath.Join(root, "testdata", "registry", "server.schema.json"))); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestServerJSON validates server.json against the registry's schema and
// checks what the schema cannot: the GitHub namespace matches the
// repository (the registry proves ownership that way), and the version is
// a plain semantic version a release tag can carry.
func TestServerJSON(t *testing.T) {
	schema := compile(t)
	doc := readJSON(t, filepath.Join(root, "server.json"))
	if err := schema.Validate(doc); err != nil {
		t.Fatalf("server.json does not match the registry schema: %v", err)
	}

	raw, _ := os.ReadFile(filepath.Join(root, "server.json"))
	var s struct {
		Schema      string `json:"$schema"`
		Name        string `json:"name"`
		Title       string `json:"title"`
		Description string `json:"description"`
		Version     string `json:"version"`
		Repository  struct {
			URL    string `json:"url"`
			Source string `json:"source"`
		} `json:"repository"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if s.Name != buildinfo.RegistryName || s.Title != buildinfo.Title || s.Description != buildinfo.Description {
		t.Errorf("server.json names %q %q %q; the server card (internal/buildinfo) says %q %q %q: keep them equal",
			s.Name, s.Title, s.Description, buildinfo.RegistryName, buildinfo.Title, buildinfo.Description)
	}
	if s.Schema != schemaURL {
		t.Errorf("$schema is %q; the committed schema is %q", s.Schema, schemaURL)
	}
	ns, name, _ := strings.Cut(s.Name, "/")
	owner, ok := strings.CutPrefix(ns, "io.github.")
	if !ok {
		t.Fatalf("name %q: a GitHub-published server is named io.github.<owner>/<name>", s.Name)
	}
	if want := "https://github.com/" + owner + "/" + name; s.Repository.URL != want || s.Repository.Source != "github" {
		t.Errorf("repository is %s (%s); the name %q needs %s (github)", s.Repository.URL, s.Repository.Source, s.Name, want)
	}
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(s.Version) {
		t.Errorf("version %q is not MAJOR.MINOR.PATCH, the tag v%s a release is cut from", s.Version, s.Version)
	}
}

// TestSchemaRefusesBrokenServerJSON shows the validation can fail: each
// broken copy of server.json is refused.
func TestSchemaRefusesBrokenServerJSON(t *testing.T) {
	schema := compile(t)
	raw, err := os.ReadFile(filepath.Join(root, "server.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ why, old, new string }{
		{"a name without a namespace", `"io.github.wicket-trading/wicket"`, `"wicket"`},
		{"a repository without its source", `"source": "github"`, `"forge": "github"`},
		{"a description over 100 characters", `"description": "`, `"description": "` + strings.Repeat("x", 100)},
	} {
		broken := bytes.Replace(raw, []byte(c.old), []byte(c.new), 1)
		if bytes.Equal(broken, raw) {
			t.Fatalf("%s: the fixture edit found nothing to change", c.why)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(broken))
		if err != nil {
			t.Fatal(err)
		}
		if schema.Validate(doc) == nil {
			t.Errorf("%s was accepted", c.why)
		}
	}
}
