// Package ociimage writes wicket's container image as an OCI image layout
// in one tar file (oci-archive), without a container daemon or a registry:
// one manifest per Linux platform over a single layer that holds the
// static wicket binary, CA roots, a passwd and group naming the non-root
// user 65532 (nonroot), its home and /tmp. Like a distroless static
// image there is no shell, package manager or libc, and the image runs as
// nonroot. `podman load`, `skopeo copy oci-archive:FILE ...` and
// `docker load` (25+) read it.
//
// It never reaches the network and never publishes anything; it reads
// only the files it is handed.
package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Media types of the OCI image specification (v1.1).
const (
	MediaIndex    = "application/vnd.oci.image.index.v1+json"
	MediaManifest = "application/vnd.oci.image.manifest.v1+json"
	MediaConfig   = "application/vnd.oci.image.config.v1+json"
	MediaLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"
)

// The image's user and paths.
const (
	UID        = 65532 // nonroot, as distroless names it
	User       = "65532:65532"
	Home       = "/home/nonroot"
	Entrypoint = "/usr/local/bin/wicket"
	CAFile     = "/etc/ssl/certs/ca-certificates.crt"
)

// Platform is one Linux binary of the image.
type Platform struct {
	Arch   string // GOARCH: amd64, arm64
	Binary []byte
}

// Descriptor points at a blob.
type Descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Platform    *PlatformSpec     `json:"platform,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// PlatformSpec is a manifest's platform in the index.
type PlatformSpec struct {
	OS           string `json:"os"`
	Architecture string `json:"architecture"`
}

// Index is index.json and an image index.
type Index struct {
	SchemaVersion int               `json:"schemaVersion"`
	MediaType     string            `json:"mediaType"`
	Manifests     []Descriptor      `json:"manifests"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

// Manifest is one platform's image manifest.
type Manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        Descriptor   `json:"config"`
	Layers        []Descriptor `json:"layers"`
}

// Config is an image's configuration.
type Config struct {
	Created      time.Time `json:"created"`
	Architecture string    `json:"architecture"`
	OS           string    `json:"os"`
	Config       struct {
		User       string            `json:"User"`
		Env        []string          `json:"Env"`
		Entrypoint []string          `json:"Entrypoint"`
		Cmd        []string          `json:"Cmd"`
		WorkingDir string            `json:"WorkingDir"`
		Labels     map[string]string `json:"Labels,omitempty"`
	} `json:"config"`
	RootFS struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

// Write writes the image of version as an OCI layout tar to w: one
// manifest per platform, each file dated at (the release's date), so the
// same inputs give the same bytes. caRoots is the PEM bundle installed at
// CAFile (wicket reaches real venues and providers over TLS).
func Write(w io.Writer, version, source string, at time.Time, caRoots []byte, platforms []Platform) error {
	if len(platforms) == 0 {
		return fmt.Errorf("ociimage: no platform")
	}
	if len(caRoots) == 0 {
		return fmt.Errorf("ociimage: no CA roots (install Debian's ca-certificates)")
	}
	at = at.UTC()
	blobs := map[string][]byte{}
	var order []string
	put := func(b []byte) string {
		sum := sha256.Sum256(b)
		d := "sha256:" + hex.EncodeToString(sum[:])
		if _, ok := blobs[d]; !ok {
			order = append(order, d)
		}
		blobs[d] = b
		return d
	}
	index := Index{SchemaVersion: 2, MediaType: MediaIndex} // the multi-platform image, a blob
	for _, p := range platforms {
		layer, diff, err := rootfs(p.Binary, caRoots, at)
		if err != nil {
			return err
		}
		var cfg Config
		cfg.Created, cfg.Architecture, cfg.OS = at, p.Arch, "linux"
		cfg.Config.User = User
		cfg.Config.Env = []string{"PATH=/usr/local/bin", "HOME=" + Home, "SSL_CERT_FILE=" + CAFile}
		cfg.Config.Entrypoint = []string{Entrypoint}
		cfg.Config.Cmd = []string{"--help"}
		cfg.Config.WorkingDir = Home
		cfg.Config.Labels = map[string]string{
			"org.opencontainers.image.title":   "wicket",
			"org.opencontainers.image.version": version,
			"org.opencontainers.image.source":  source,
		}
		cfg.RootFS.Type, cfg.RootFS.DiffIDs = "layers", []string{diff}
		cb, err := json.Marshal(cfg)
		if err != nil {
			return err
		}
		m := Manifest{SchemaVersion: 2, MediaType: MediaManifest,
			Config: Descriptor{MediaType: MediaConfig, Digest: put(cb), Size: int64(len(cb))},
			Layers: []Descriptor{{MediaType: MediaLayer, Digest: put(layer), Size: int64(len(layer))}}}
		mb, err := json.Marshal(m)
		if err != nil {
			return err
		}
		index.Manifests = append(index.Manifests, Descriptor{MediaType: MediaManifest, Digest: put(mb), Size: int64(len(mb)),
			Platform: &PlatformSpec{OS: "linux", Architecture: p.Arch}})
	}
	xb, err := json.Marshal(index)
	if err != nil {
		return err
	}
	// index.json names the one image by version, as an OCI archive
	// reader (skopeo oci-archive:FILE:VERSION) expects.
	top := Index{SchemaVersion: 2, MediaType: MediaIndex, Manifests: []Descriptor{{MediaType: MediaIndex, Digest: put(xb), Size: int64(len(xb)),
		Annotations: map[string]string{"org.opencontainers.image.ref.name": version}}}}
	ib, err := json.Marshal(top)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	file := func(name string, b []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), ModTime: at, Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(b)
		return err
	}
	for _, dir := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Name: dir, Mode: 0o755, ModTime: at, Typeflag: tar.TypeDir, Format: tar.FormatPAX}); err != nil {
			return err
		}
	}
	if err := file("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return err
	}
	if err := file("index.json", ib); err != nil {
		return err
	}
	for _, d := range order {
		if err := file("blobs/sha256/"+d[len("sha256:"):], blobs[d]); err != nil {
			return err
		}
	}
	return tw.Close()
}

// rootfs is the image's one layer, gzipped, and the digest of its tar
// (the config's diff_id).
func rootfs(bin, caRoots []byte, at time.Time) (layer []byte, diffID string, err error) {
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	entry := func(name string, mode int64, uid int, body []byte, dir bool) error {
		h := &tar.Header{Name: name, Mode: mode, Uid: uid, Gid: uid, ModTime: at, Format: tar.FormatPAX, Typeflag: tar.TypeReg, Size: int64(len(body))}
		if dir {
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := tw.Write(body)
		return err
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:%s:/sbin/nologin\n", UID, UID, Home)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", UID)
	for _, e := range []struct {
		name string
		mode int64
		uid  int
		body []byte
		dir  bool
	}{
		{"etc/", 0o755, 0, nil, true},
		{"etc/passwd", 0o644, 0, []byte(passwd), false},
		{"etc/group", 0o644, 0, []byte(group), false},
		{"etc/ssl/", 0o755, 0, nil, true},
		{"etc/ssl/certs/", 0o755, 0, nil, true},
		{CAFile[1:], 0o644, 0, caRoots, false},
		{"home/", 0o755, 0, nil, true},
		{Home[1:] + "/", 0o700, UID, nil, true},
		{"tmp/", 0o1777, 0, nil, true},
		{"usr/", 0o755, 0, nil, true},
		{"usr/local/", 0o755, 0, nil, true},
		{"usr/local/bin/", 0o755, 0, nil, true},
		{Entrypoint[1:], 0o755, 0, bin, false},
	} {
		if err := entry(e.name, e.mode, e.uid, e.body, e.dir); err != nil {
			return nil, "", err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(raw.Bytes())
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return nil, "", err
	}
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return nil, "", err
	}
	if err := zw.Close(); err != nil {
		return nil, "", err
	}
	return gz.Bytes(), "sha256:" + hex.EncodeToString(sum[:]), nil
}
