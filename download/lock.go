package download

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// lockName is the lock file of a download folder; it is never removed
// (removing a flock'ed file lets two holders in).
const lockName = ".lock"

// ErrBusy means another download or sync holds the folder's lock.
var ErrBusy = errors.New("another cnpjgraph download or sync is running in this folder")

// dirLock is an exclusive flock on DIR/.lock, released by the kernel if
// the process dies, so a killed sync never leaves a stale lock.
type dirLock struct{ f *os.File }

// lockDir takes the folder's lock without waiting; when it is held, the
// error names the holder (pid, host, command, since when).
func lockDir(dir, command string) (*dirLock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := io.ReadAll(io.LimitReader(f, 512))
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			h := strings.TrimSpace(string(holder))
			if h == "" {
				h = "holder unknown"
			}
			return nil, fmt.Errorf("%w: %s holds %s; wait for it to finish", ErrBusy, h, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	host, _ := os.Hostname()
	holder := fmt.Sprintf("cnpjgraph %s (pid %d on %s, since %s)\n", command, os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(holder), 0)
	}
	return &dirLock{f: f}, nil
}

func (l *dirLock) unlock() {
	_ = l.f.Truncate(0)
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	_ = l.f.Close()
}
