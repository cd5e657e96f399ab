//go:build !unix

package sqlitestore

import "errors"

// walIndex is not read on this platform: every read queries the file, as without a cache.
type walIndex struct{}

func openWalIndex(string) (*walIndex, error) {
	return nil, errors.New("the wal-index is read on unix systems only")
}

func (w *walIndex) release() error { return nil }

func (w *walIndex) header() (walHeader, bool) { return walHeader{}, false }
