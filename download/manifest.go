package download

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// manifestName is the sidecar of a month folder: for each file, the
// version (size, etag, date) of the share it came from and whether it was
// verified. A second run skips a verified file of the same version without
// reading it, and resumes a .part only if it is of the version listed now.
const manifestName = ".download.json"

type manifest struct {
	path string
	mu   sync.Mutex
	// Files is keyed by file name.
	Files map[string]record `json:"files"`
}

type record struct {
	Size     int64     `json:"size"`
	ETag     string    `json:"etag,omitempty"`
	Modified time.Time `json:"modified"`
	Verified bool      `json:"verified"` // false: a .part of this version is on its way
}

func recordOf(e Entry, verified bool) record {
	return record{Size: e.Size, ETag: e.ETag, Modified: e.Modified, Verified: verified}
}

// sameVersion tells whether r describes the file e of the listing: the etag
// when the share gives one, else size and date.
func (r record) sameVersion(e Entry) bool {
	if r.Size != e.Size {
		return false
	}
	if e.ETag != "" || r.ETag != "" {
		return r.ETag == e.ETag
	}
	return r.Modified.Equal(e.Modified)
}

func loadManifest(dir string) (*manifest, error) {
	m := &manifest{path: filepath.Join(dir, manifestName), Files: map[string]record{}}
	raw, err := os.ReadFile(m.path)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, m); err != nil || m.Files == nil {
		// A damaged sidecar only costs re-verification of what is there.
		m.Files = map[string]record{}
	}
	return m, nil
}

func (m *manifest) get(name string) (record, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.Files[name]
	return r, ok
}

// put records a file and rewrites the sidecar atomically.
func (m *manifest) put(name string, r record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Files[name] = r
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := m.path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	return os.Rename(tmp, m.path)
}
