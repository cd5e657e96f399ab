//go:build unix

package sqlitestore

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkWalIndexHeader is what a request pays to learn whether the file changed: the two
// copies of the header read from the mapping and compared.
func BenchmarkWalIndexHeader(b *testing.B) {
	db, err := Open(filepath.Join(b.TempDir(), "orderd.db"), 0)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	w := db.cache.wal
	if w == nil {
		b.Fatal("no wal-index mapped")
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := w.header(); !ok {
			b.Fatal("header not usable")
		}
	}
}

// BenchmarkWalIndexHeaderPread is the alternative to the mapping: the two copies read with
// pread(2) on every request. It is here to compare with BenchmarkWalIndexHeader.
func BenchmarkWalIndexHeaderPread(b *testing.B) {
	path := filepath.Join(b.TempDir(), "orderd.db")
	db, err := Open(path, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	f, err := os.Open(path + "-shm")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close() // after db.Close: closing it drops the process's locks on the -shm
	var buf [96]byte
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.ReadAt(buf[:], 0); err != nil {
			b.Fatal(err)
		}
		if [48]byte(buf[:48]) != [48]byte(buf[48:]) {
			b.Fatal("copies differ")
		}
	}
}
