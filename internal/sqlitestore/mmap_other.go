//go:build !unix

package sqlitestore

import (
	"fmt"
	"os"
)

// mapPage fails: every read queries the file, as without a cache.
func mapPage(*os.File) ([]byte, error) {
	return nil, fmt.Errorf("%w: it is mapped on unix systems only", ErrReadCacheUnsupported)
}

func unmap([]byte) error { return nil }
