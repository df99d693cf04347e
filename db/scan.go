package db

import (
	"fmt"
	"time"
)

// Scanners of nullable columns into the rows' pointer fields. database/sql
// converts a value into a **T by reflection (reflect.New, then a second
// conversion), a tenth of an office lookup's allocations and most of its
// scanning's CPU (docs/benchmarks.md, "where a lookup's allocations go");
// these do the same for the types lib/pq hands over, directly. Each is one
// pointer, so putting it in a Scan's []any allocates nothing.

// nullString scans text into *p: nil for NULL.
type nullString struct{ p **string }

func (n nullString) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*n.p = nil
	case string:
		*n.p = &v
	case []byte:
		s := string(v)
		*n.p = &s
	default:
		return fmt.Errorf("scan %T into a nullable string", src)
	}
	return nil
}

// nullTime scans a date or timestamp into *p: nil for NULL.
type nullTime struct{ p **time.Time }

func (n nullTime) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*n.p = nil
	case time.Time:
		*n.p = &v
	default:
		return fmt.Errorf("scan %T into a nullable time", src)
	}
	return nil
}

// nullBool scans a boolean into *p: nil for NULL.
type nullBool struct{ p **bool }

func (n nullBool) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*n.p = nil
	case bool:
		*n.p = &v
	default:
		return fmt.Errorf("scan %T into a nullable bool", src)
	}
	return nil
}
