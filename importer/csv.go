package importer

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// maxRecordBytes bounds one record: a quote that is never closed would
// otherwise swallow the rest of the file into a single field.
const maxRecordBytes = 1 << 20

// errUnterminated reports a quoted field that never ends.
var errUnterminated = errors.New("unterminated quoted field")

// recordReader parses the dump's CSV dialect (`;` separated, every field
// double-quoted, `""` escapes a quote) straight from ISO-8859-1 bytes into
// UTF-8, dropping NUL bytes. It is hand-rolled because encoding/csv plus a
// transcoding reader costs several times more CPU per row, and the import is
// CPU-bound on both ends of the COPY stream. Fields are slices into a buffer
// reused by the next call.
type recordReader struct {
	r      *bufio.Reader
	line   int // physical lines consumed so far
	start  int // line the last record started on (1-based)
	buf    []byte
	ends   []int
	fields [][]byte
	first  bool
}

func newRecordReader(r io.Reader) *recordReader {
	return &recordReader{r: bufio.NewReaderSize(r, 1<<20), buf: make([]byte, 0, 4096), first: true}
}

// Line is the physical line the last record returned by Next started on.
func (rr *recordReader) Line() int { return rr.start }

// Next returns the next record's fields, or io.EOF after the last one.
// Blank lines are skipped.
func (rr *recordReader) Next() ([][]byte, error) {
	for {
		fields, err := rr.next()
		if err != nil || len(fields) > 1 || len(fields[0]) > 0 {
			return fields, err
		}
	}
}

func (rr *recordReader) next() ([][]byte, error) {
	rr.buf = rr.buf[:0]
	rr.ends = rr.ends[:0]
	rr.start = rr.line + 1
	inQuotes := false  // inside a quoted field
	fieldStart := true // nothing of the current field read yet
	for {
		data, err := rr.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(rr.buf) > maxRecordBytes {
				return nil, rr.tooLong()
			}
		} else if err != nil && !errors.Is(err, io.EOF) {
			// Decompression and checksum errors of a corrupt ZIP land here.
			return nil, fmt.Errorf("line %d: %w", rr.line+1, err)
		}
		if len(data) == 0 && errors.Is(err, io.EOF) {
			if inQuotes {
				return nil, fmt.Errorf("line %d: %w", rr.start, errUnterminated)
			}
			if len(rr.buf) == 0 && len(rr.ends) == 0 && fieldStart {
				return nil, io.EOF
			}
			return rr.finish(), nil
		}
		if rr.first {
			rr.first = false
			data = bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF}) // a UTF-8 BOM some tools add
		}
		if data[len(data)-1] == '\n' {
			rr.line++
		}
		i := 0
		for i < len(data) {
			if inQuotes {
				q := bytes.IndexByte(data[i:], '"')
				if q < 0 {
					rr.appendLatin1(data[i:])
					break
				}
				rr.appendLatin1(data[i : i+q])
				i += q + 1
				// A quote closes the field only before `;` or the end of the
				// line; `""` is an escaped quote; any other quote is taken
				// literally, as the registry's data has stray ones.
				if i < len(data) && data[i] == '"' {
					rr.buf = append(rr.buf, '"')
					i++
					continue
				}
				if i >= len(data) || data[i] == ';' || data[i] == '\n' || data[i] == '\r' {
					inQuotes = false
					continue
				}
				rr.buf = append(rr.buf, '"')
				continue
			}
			c := data[i]
			switch {
			case c == ';':
				rr.ends = append(rr.ends, len(rr.buf))
				fieldStart = true
				i++
			case c == '\n':
				return rr.finish(), nil
			case c == '\r' && (i+1 == len(data) || data[i+1] == '\n'):
				i++
			case c == '"' && fieldStart:
				inQuotes, fieldStart = true, false
				i++
			default:
				// Unquoted text, or text after a closing quote: keep it.
				fieldStart = false
				j := i + 1
				for j < len(data) && data[j] != ';' && data[j] != '\n' && data[j] != '\r' {
					j++
				}
				rr.appendLatin1(data[i:j])
				i = j
			}
		}
		if len(rr.buf) > maxRecordBytes {
			return nil, rr.tooLong()
		}
		if errors.Is(err, io.EOF) {
			if inQuotes {
				return nil, fmt.Errorf("line %d: %w", rr.start, errUnterminated)
			}
			return rr.finish(), nil
		}
	}
}

func (rr *recordReader) tooLong() error {
	return fmt.Errorf("line %d: %w (record longer than %d bytes)", rr.start, errUnterminated, maxRecordBytes)
}

func (rr *recordReader) finish() [][]byte {
	rr.ends = append(rr.ends, len(rr.buf))
	rr.fields = rr.fields[:0]
	prev := 0
	for _, e := range rr.ends {
		rr.fields = append(rr.fields, rr.buf[prev:e:e])
		prev = e
	}
	return rr.fields
}

// appendLatin1 appends ISO-8859-1 bytes as UTF-8, dropping NULs. Runs of
// plain ASCII, by far the common case, are copied eight bytes at a time.
func (rr *recordReader) appendLatin1(s []byte) {
	i := 0
	for i+8 <= len(s) {
		v := binary.LittleEndian.Uint64(s[i:])
		// High bit set in any byte, or any zero byte: take the slow path.
		if v&0x8080808080808080 != 0 || (v-0x0101010101010101)&^v&0x8080808080808080 != 0 {
			break
		}
		i += 8
	}
	for j := i; j < len(s); j++ {
		if c := s[j]; c == 0 || c >= 0x80 {
			rr.buf = append(rr.buf, s[:j]...)
			rr.appendSlow(s[j:])
			return
		}
	}
	rr.buf = append(rr.buf, s...)
}

func (rr *recordReader) appendSlow(s []byte) {
	for _, c := range s {
		switch {
		case c == 0:
		case c < 0x80:
			rr.buf = append(rr.buf, c)
		default:
			rr.buf = append(rr.buf, 0xC0|c>>6, 0x80|c&0x3F)
		}
	}
}
