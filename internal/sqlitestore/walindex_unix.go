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

// walIndex maps a -shm file's first page read-only and shared, for every DB of the process on
// that file; nil reads no header.
type walIndex struct {
	id   [2]uint64 // device and inode
	file *os.File
	mem  []byte
	refs int // DBs using it; guarded by walIndexes
}

// walIndexes are the mapped -shm files of the process, each opened once and closed when no DB
// uses it: closing ANY descriptor of the file drops the process's POSIX locks, SQLite's too.
var walIndexes = struct {
	sync.Mutex
	open map[[2]uint64]*walIndex
}{open: map[[2]uint64]*walIndex{}}

// openWalIndex maps the -shm file shm, which a WAL connection has sized. It opens no second
// descriptor of a file the process has mapped, and none of a file it would refuse.
func openWalIndex(shm string) (*walIndex, error) {
	walIndexes.Lock()
	defer walIndexes.Unlock()
	info, err := os.Stat(shm)
	if err != nil {
		return nil, err
	}
	if w := walIndexes.open[fileID(info)]; w != nil {
		w.refs++
		return w, nil
	}
	if info.Size() < int64(os.Getpagesize()) { // reading a page past the file's end faults
		return nil, fmt.Errorf("%w: %s is %d bytes, less than a memory page (%d bytes)", ErrReadCacheUnsupported, shm, info.Size(), os.Getpagesize())
	}
	w := &walIndex{id: fileID(info), refs: 1}
	if w.file, err = os.Open(shm); err != nil {
		return nil, err
	}
	if info, err = w.file.Stat(); err == nil && fileID(info) != w.id {
		err = fmt.Errorf("%s changed while being opened", shm)
	}
	if err == nil {
		w.mem, err = syscall.Mmap(int(w.file.Fd()), 0, os.Getpagesize(), syscall.PROT_READ, syscall.MAP_SHARED)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("map %s: %w", shm, err), w.file.Close())
	}
	walIndexes.open[w.id] = w
	return w, nil
}

func fileID(info os.FileInfo) [2]uint64 {
	st := info.Sys().(*syscall.Stat_t) // what os.Stat gives on every unix; the fields' types vary
	return [2]uint64{uint64(st.Dev), uint64(st.Ino)}
}

// release ends a DB's use of w, after its connections are closed; the last use unmaps.
func (w *walIndex) release() error {
	if w == nil {
		return nil
	}
	walIndexes.Lock()
	defer walIndexes.Unlock()
	if w.refs--; w.refs > 0 {
		return nil
	}
	delete(walIndexes.open, w.id)
	return errors.Join(syscall.Munmap(w.mem), w.file.Close())
}

// header reads the wal-index header, and reports whether a commit wrote it: both copies agree
// and are initialised (iVersion 3007000; a new -shm is zeros). Atomic loads: another process
// writes, and the first copy is read first. Should the page fault all the same, this request
// reads the file instead of crashing.
func (w *walIndex) header() (h walHeader, ok bool) {
	if w == nil {
		return walHeader{}, false
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			h, ok = walHeader{}, false
		}
	}()
	words := (*[2 * len(h)]uint32)(unsafe.Pointer(unsafe.SliceData(w.mem)))
	var second walHeader
	for i := range h { // all of the first copy, then the second: SQLite writes them in the other order
		h[i] = atomic.LoadUint32(&words[i])
	}
	for i := range second {
		second[i] = atomic.LoadUint32(&words[len(h)+i])
	}
	return h, h == second && h[0] == 3007000
}
