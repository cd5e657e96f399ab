package sqlitestore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
)

// OpenFile opens the file, making it only when create is set (a mistyped path is an error, not an
// empty store), and says why path cannot be opened where SQLite would say "unable to open database file".
func OpenFile(path string, create bool) (*DB, error) {
	info, err := os.Stat(path)
	dir, dirErr := os.Stat(filepath.Dir(path))
	switch {
	case path == "":
		return nil, errors.New("no SQLite file named: the embedded mode needs one")
	case err == nil && info.IsDir():
		return nil, fmt.Errorf("SQLite file %s: is a directory", path)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("SQLite file: %w", err)
	case err != nil && (dirErr != nil || !dir.IsDir()):
		return nil, fmt.Errorf("SQLite file %s: the directory %s does not exist", path, filepath.Dir(path))
	case err != nil && !create:
		return nil, fmt.Errorf("SQLite file %s: no such file (orderd import or orderd keys create makes it)", path)
	}
	return Open(path, 0)
}

// LogReadCache logs whether the file's reads are answered from memory, and if not why.
func (db *DB) LogReadCache(log *slog.Logger) {
	err := db.ReadCache()
	if err == nil {
		log.Info("sqlite read cache: on; a read of an unchanged file is answered from memory")
		return
	}
	level := map[bool]slog.Level{true: slog.LevelInfo, false: slog.LevelWarn}[errors.Is(err, ErrReadCacheUnsupported)]
	log.Log(context.Background(), level, "sqlite read cache: off; every read queries the file", slog.String("reason", err.Error()))
}
