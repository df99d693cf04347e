package download

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// table fetches a mapping table unless the month folder has it. When its
// server fails, the copy of the newest older month folder is used, with a
// warning: a flaky Tesouro or Comex Stat server must not hold back a dump.
func (m *monthRun) table(ctx context.Context, root, name, url string) error {
	final := filepath.Join(m.res.Dir, name)
	if st, err := os.Stat(final); err == nil && st.Size() > 0 {
		m.res.Skipped++
		return nil
	}
	part := final + ".part"
	err := m.c.fetch(ctx, name, url, false, part, -1, nil)
	if err == nil {
		if err = os.Rename(part, final); err == nil {
			m.res.Downloaded++
			m.out.printf("%s: fetched from %s", name, Redact(url))
			return nil
		}
	}
	_ = os.Remove(part)
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if older := olderCopy(root, m.res.Month, name); older != "" {
		if cerr := copyFile(older, final); cerr == nil {
			m.out.printf("warning: %s: %s: %v; using the copy of %s", name, Redact(url), err, older)
			return nil
		}
	}
	return fmt.Errorf("%s from %s: %w", name, Redact(url), err)
}

// olderCopy finds name in the newest month folder of root before month.
func olderCopy(root, month, name string) string {
	months, _ := monthFolders(root)
	for i := len(months) - 1; i >= 0; i-- {
		if months[i] >= month {
			continue
		}
		p := filepath.Join(root, months[i], name)
		if st, err := os.Stat(p); err == nil && st.Size() > 0 {
			return p
		}
	}
	return ""
}

// monthFolders lists root's YYYY-MM folders, oldest first.
func monthFolders(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && monthPattern.MatchString(e.Name()) {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer func() { _ = src.Close() }()
	tmp := to + ".part"
	dst, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		_ = dst.Close()
		return err
	}
	if err := dst.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, to)
}
