//go:build race

package worker

// Under the race detector every byte of heap needs several more of shadow
// address space, mapped as the heap grows; the allowance is scaled so a
// race-enabled worker (a test binary) has the same usable memory.
const raceFactor = 8
