package project

import "io/fs"

// FileKind names what a file that is not a regular file is, with its
// article ("a named pipe (FIFO)", "a character device"), for the errors of
// every reader that takes regular files only.
func FileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return "a special file (" + m.Type().String() + ")"
}
