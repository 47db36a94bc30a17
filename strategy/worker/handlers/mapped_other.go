//go:build !unix

package handlers

import "errors"

// errNoMmap says this platform maps no files: shared bars are read.
var errNoMmap = errors.New("no mmap")

func mapFile(string) ([]byte, func([]byte) error, error) { return nil, nil, errNoMmap }

// processAlive cannot tell here: a directory is never taken for stale.
func processAlive(int) bool { return true }
