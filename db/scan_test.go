package db

import (
	"testing"
	"time"
)

// TestNullableScanners: each scanner sets its pointer for a value of the
// types lib/pq hands over, clears it for NULL, and refuses any other type
// rather than guessing (database/sql's reflection would have converted it).
func TestNullableScanners(t *testing.T) {
	old := "old"
	s := &old
	if err := (nullString{&s}).Scan("SERPRO"); err != nil || s == nil || *s != "SERPRO" {
		t.Fatalf("string: %v, %v", s, err)
	}
	if err := (nullString{&s}).Scan([]byte("ab")); err != nil || s == nil || *s != "ab" {
		t.Fatalf("bytes: %v, %v", s, err)
	}
	if err := (nullString{&s}).Scan(nil); err != nil || s != nil {
		t.Fatalf("NULL: %v, %v", s, err)
	}
	if err := (nullString{&s}).Scan(int64(1)); err == nil {
		t.Fatal("an int64 scanned into a string")
	}

	day := time.Date(2005, 11, 3, 0, 0, 0, 0, time.UTC)
	var d *time.Time
	if err := (nullTime{&d}).Scan(day); err != nil || d == nil || !d.Equal(day) {
		t.Fatalf("time: %v, %v", d, err)
	}
	if err := (nullTime{&d}).Scan(nil); err != nil || d != nil {
		t.Fatalf("NULL time: %v, %v", d, err)
	}
	if err := (nullTime{&d}).Scan("2005-11-03"); err == nil {
		t.Fatal("a string scanned into a time")
	}

	var b *bool
	if err := (nullBool{&b}).Scan(false); err != nil || b == nil || *b {
		t.Fatalf("bool: %v, %v", b, err)
	}
	if err := (nullBool{&b}).Scan(nil); err != nil || b != nil {
		t.Fatalf("NULL bool: %v, %v", b, err)
	}
	if err := (nullBool{&b}).Scan("t"); err == nil {
		t.Fatal("a string scanned into a bool")
	}
}

// TestScannersDoNotAllocate: a scanner in a Scan's []any is one pointer,
// stored in the interface as it is.
func TestScannersDoNotAllocate(t *testing.T) {
	var s *string
	var d *time.Time
	var b *bool
	dest := make([]any, 3)
	if n := testing.AllocsPerRun(100, func() {
		dest[0], dest[1], dest[2] = nullString{&s}, nullTime{&d}, nullBool{&b}
	}); n != 0 {
		t.Fatalf("%v allocations a row's scanners", n)
	}
}
