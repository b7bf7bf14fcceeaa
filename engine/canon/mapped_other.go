//go:build !linux

package canon

import "os"

// canMap says ReadFile may parse large files through a mapping here: only
// on Linux, where MADV_DONTNEED releases a private file mapping's pages.
const canMap = false

const mapFrom = bigDocument

func readMapped(path string, f *os.File, size int, maxBytes int) (any, error) {
	return readHeap(path, f, int64(size), maxBytes)
}
