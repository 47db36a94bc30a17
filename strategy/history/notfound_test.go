package history

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
)

// TestIsNotFound: a store that is not there, and a series it does not
// hold, are NotFound however deeply wrapped; other failures are not.
func TestIsNotFound(t *testing.T) {
	dir := t.TempDir()
	_, err := OpenReadOnly(filepath.Join(dir, "none.db"))
	if !IsNotFound(err) || !IsNotFound(fmt.Errorf("loading: %w", err)) {
		t.Errorf("a missing store: %v", err)
	}
	s, err := Open(filepath.Join(dir, "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Info("NOPE-USD@1h"); !IsNotFound(err) {
		t.Errorf("a missing series: %v", err)
	}
	if IsNotFound(errors.New("disk full")) || IsNotFound(nil) {
		t.Error("a plain error or nil counted as NotFound")
	}
}
