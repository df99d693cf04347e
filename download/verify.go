package download

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zip"
)

// verifyZip checks a downloaded ZIP: its size against the listing, its
// central directory, and the CRC-32 of every member, which the zip package
// (klauspost/compress/zip: archive/zip with a faster inflate) compares when
// a member is read to its end. Members are streamed through a fixed buffer:
// memory stays flat whatever the size.
func verifyZip(path string, size int64, buf []byte) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st.Size() != size {
		return fmt.Errorf("%d bytes, the listing says %d", st.Size(), size)
	}
	z, err := zip.OpenReader(path)
	if err != nil {
		return fmt.Errorf("not a readable ZIP (central directory): %w", err)
	}
	defer func() { _ = z.Close() }()
	// Deflate reads through a 4 KiB buffer of its own otherwise: a pread
	// per 4 KiB of the file.
	z.RegisterDecompressor(zip.Deflate, func(r io.Reader) io.ReadCloser {
		return flate.NewReader(bufio.NewReaderSize(r, 256<<10))
	})
	if len(z.File) == 0 {
		return errors.New("a ZIP without members")
	}
	for _, m := range z.File {
		if err := verifyMember(m, buf); err != nil {
			return fmt.Errorf("member %s: %w", m.Name, err)
		}
	}
	return nil
}

func verifyMember(m *zip.File, buf []byte) error {
	r, err := m.Open()
	if err != nil {
		return err
	}
	defer func() { _ = r.Close() }()
	// io.Discard's ReadFrom would bring its own small buffer.
	_, err = io.CopyBuffer(discard{}, r, buf)
	return err
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
