package listfile

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/klauspost/compress/zip"
)

// JSONZip writes a .zip holding one "<taxId>.json" per office, the office
// answer's JSON exactly as given: the archive is a bundle of lookup answers,
// so a client reads each file as it would read the lookup itself.
type JSONZip struct {
	zw       *zip.Writer
	modified time.Time
}

// NewJSONZip starts an archive on w.
func NewJSONZip(w io.Writer) *JSONZip {
	// One time for every entry: the export's, not each office's update.
	return &JSONZip{zw: zip.NewWriter(w), modified: time.Now().UTC().Truncate(time.Second)}
}

// Add writes body, Deflate-compressed, as "<taxID>.json". A tax id that is
// empty or holds a path separator is refused: unzipping must not write
// outside the folder the user picked.
func (z *JSONZip) Add(taxID string, body []byte) error {
	if taxID == "" || strings.ContainsAny(taxID, `/\`) {
		return fmt.Errorf("listfile: tax id %q is no file name", taxID)
	}
	fw, err := z.zw.CreateHeader(&zip.FileHeader{
		Name:     taxID + ".json",
		Method:   zip.Deflate,
		Modified: z.modified,
	})
	if err != nil {
		return err
	}
	_, err = fw.Write(body)
	return err
}

// Close writes the central directory; without it the archive is unreadable.
// It does not close the underlying writer.
func (z *JSONZip) Close() error { return z.zw.Close() }
