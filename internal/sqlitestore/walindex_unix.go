//go:build unix

package sqlitestore

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// walIndex maps a -shm file's first page read-only, for every DB of the process on that file;
// nil never reads a header.
type walIndex struct {
	id   shmID
	file *os.File
	mem  []byte // the first page of the -shm file, mapped read-only and shared
	refs int    // DBs using it; guarded by walIndexes.mu
}

// shmID names a -shm file by device and inode, whatever path reached it.
type shmID struct{ dev, ino uint64 }

// walIndexes are the mapped -shm files of the process, each opened once and closed when no DB
// uses it: closing ANY descriptor of the file drops the process's POSIX locks, SQLite's too.
var walIndexes = struct {
	mu   sync.Mutex
	open map[shmID]*walIndex
}{open: map[shmID]*walIndex{}}

// openWalIndex maps the wal-index of the file at path, which a WAL connection has read (sized).
func openWalIndex(path string) (*walIndex, error) {
	walIndexes.mu.Lock()
	defer walIndexes.mu.Unlock()
	shm := path + "-shm"
	info, err := os.Stat(shm)
	if err != nil {
		return nil, err
	}
	id := shmIDOf(info)
	if w := walIndexes.open[id]; w != nil {
		w.refs++
		return w, nil
	}
	pageSize := os.Getpagesize()
	if info.Size() < int64(pageSize) {
		// Reading a mapped page past the end of the file faults: leave this file alone.
		return nil, fmt.Errorf("%w: %s is %d bytes, less than a memory page (%d bytes)", ErrReadCacheUnsupported, shm, info.Size(), pageSize)
	}
	f, err := os.Open(shm)
	if err != nil {
		return nil, err
	}
	if info, err = f.Stat(); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	if shmIDOf(info) != id {
		return nil, errors.Join(fmt.Errorf("%s changed while being opened", shm), f.Close())
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, pageSize, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("mmap %s: %w", shm, err), f.Close())
	}
	w := &walIndex{id: id, file: f, mem: mem, refs: 1}
	walIndexes.open[id] = w
	return w, nil
}

// shmIDOf takes what os.Stat gives on every unix; the fields' types vary by platform.
func shmIDOf(info os.FileInfo) shmID {
	st := info.Sys().(*syscall.Stat_t)
	return shmID{dev: uint64(st.Dev), ino: uint64(st.Ino)}
}

// release ends this DB's use of w, after its connections are closed; the last use unmaps.
func (w *walIndex) release() error {
	if w == nil {
		return nil
	}
	walIndexes.mu.Lock()
	defer walIndexes.mu.Unlock()
	if w.refs--; w.refs > 0 {
		return nil
	}
	delete(walIndexes.open, w.id)
	return errors.Join(syscall.Munmap(w.mem), w.file.Close())
}

// header reads the wal-index header, and reports whether a commit wrote it: both copies agree
// and are initialised. Atomic loads: another process writes, and the first copy is read first.
func (w *walIndex) header() (h walHeader, ok bool) {
	if w == nil {
		return walHeader{}, false
	}
	// Should the page fault all the same, this request reads the file instead of crashing.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			h, ok = walHeader{}, false
		}
	}()
	words := (*[walIndexHeaderSize / 4]uint32)(unsafe.Pointer(unsafe.SliceData(w.mem)))
	var copies [2]walHeader
	for i := range words { // in order: the first copy, then the second
		copies[i/len(h)][i%len(h)] = atomic.LoadUint32(&words[i])
	}
	return copies[0], copies[0] == copies[1] && copies[0][0] == walIndexVersion
}
