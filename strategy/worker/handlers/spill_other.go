//go:build !unix

package handlers

// fileSpill cannot map files here: a worker's memo keeps no spill, and
// the columns it evicts are computed again when asked for.
type fileSpill struct{}

const (
	SpillBytes    = 0
	SpillMinBytes = 0
)

func newFileSpill(string, int) (*fileSpill, error) { return nil, errNoMmap }

func (*fileSpill) Put([][]float64) ([][]float64, bool) { return nil, false }
func (*fileSpill) Cool([][]float64)                    {}
func (*fileSpill) full() bool                          { return false }
func (*fileSpill) reset() error                        { return nil }

func coolShared(*sharedColumns) {}

func coolBars(*mapping) {}
