//go:build !unix

package sqlitestore

import "fmt"

// walIndex is not read on this platform: every read queries the file, as without a cache.
type walIndex struct{}

func openWalIndex(string) (*walIndex, error) {
	return nil, fmt.Errorf("%w: it is mapped on unix systems only", ErrReadCacheUnsupported)
}

func (*walIndex) release() error { return nil }

func (*walIndex) header() (walHeader, bool) { return walHeader{}, false }
