//go:build unix

package sqlitestore

import (
	"os"
	"syscall"
)

// mapPage maps f's first page read-only and shared: it shows other processes' writes.
func mapPage(f *os.File) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, os.Getpagesize(), syscall.PROT_READ, syscall.MAP_SHARED)
}

func unmap(mem []byte) error { return syscall.Munmap(mem) }
