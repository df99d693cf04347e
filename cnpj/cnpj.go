// Package cnpj parses and validates Brazilian tax ids: CNPJs in the numeric and
// the 2026 alphanumeric form, company roots, masked CPFs, and derives the
// deterministic ids of persons.
package cnpj

import (
	"errors"
	"strconv"
)

// Length is the number of characters of a CNPJ without punctuation.
const Length = 14

// RootLength is the number of characters of a company root (the company id).
const RootLength = 8

// Errors returned by Parse; callers turn them into validation messages.
var (
	ErrLength     = errors.New("a CNPJ has 14 characters")
	ErrCharacter  = errors.New("a CNPJ holds only digits and, in its first 12 characters, uppercase letters")
	ErrCheckDigit = errors.New("wrong CNPJ check digits")
)

// CNPJ is a valid 14-character tax id of an establishment (office).
type CNPJ string

// Parse validates s as a CNPJ: 14 characters, the first 12 digits or uppercase
// letters A-Z, the last two digits that match the check-digit rule of
// IN RFB 2.229/2024 (which is the classic rule for all-numeric CNPJs).
func Parse(s string) (CNPJ, error) {
	if len(s) != Length {
		return "", ErrLength
	}
	for i := 0; i < Length; i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
		case c >= 'A' && c <= 'Z' && i < 12:
		default:
			return "", ErrCharacter
		}
	}
	d1, d2 := CheckDigits(s[:12])
	if s[12] != d1 || s[13] != d2 {
		return "", ErrCheckDigit
	}
	return CNPJ(s), nil
}

// Valid reports whether s is a valid CNPJ.
func Valid(s string) bool {
	_, err := Parse(s)
	return err == nil
}

// CheckDigits computes the two check digits of the first 12 characters of a
// CNPJ. Each character counts as its ASCII code minus 48, so '0'..'9' are 0..9
// and 'A' is 17. base must hold 12 characters of [0-9A-Z].
func CheckDigits(base string) (byte, byte) {
	dv1 := checkDigit(base, 12)
	dv2 := checkDigit(base+string(dv1), 13)
	return dv1, dv2
}

func checkDigit(s string, n int) byte {
	sum := 0
	weight := n - 7 // 5 for DV1, 6 for DV2; the weights cycle 9..2
	for i := 0; i < n; i++ {
		sum += int(s[i]-'0') * weight
		weight--
		if weight < 2 {
			weight = 9
		}
	}
	r := sum % 11
	if r < 2 {
		return '0'
	}
	return byte('0' + 11 - r)
}

// Root returns the company root: the first 8 characters.
func (c CNPJ) Root() Root { return Root(c[:RootLength]) }

// Order returns the 4-character establishment order (0001 for most head offices).
func (c CNPJ) Order() string { return string(c[RootLength:12]) }

// String returns the 14 characters.
func (c CNPJ) String() string { return string(c) }

// Build assembles a CNPJ from its root and order, computing the check digits.
// root must have 8 and order 4 characters of [0-9A-Z].
func Build(root, order string) CNPJ {
	base := root + order
	d1, d2 := CheckDigits(base)
	return CNPJ(base + string([]byte{d1, d2}))
}

// Root is the 8-character company id shared by all offices of a company.
type Root string

// ParseRoot accepts a company id as clients send it: 1 to 8 digits, left-padded
// with zeros to 8 (clients that type it as a number drop the leading zeros), or
// 8 characters of digits and uppercase letters (alphanumeric roots).
func ParseRoot(s string) (Root, error) {
	if s == "" || len(s) > RootLength {
		return "", errors.New("a company id has 1 to 8 characters")
	}
	numeric := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
		case c >= 'A' && c <= 'Z':
			numeric = false
		default:
			return "", errors.New("a company id holds only digits and uppercase letters")
		}
	}
	if !numeric {
		if len(s) != RootLength {
			return "", errors.New("an alphanumeric company id has 8 characters")
		}
		return Root(s), nil
	}
	return Root(zeros[:RootLength-len(s)] + s), nil
}

const zeros = "00000000"

// Digits reports whether s is non-empty and holds only the digits 0-9.
func Digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Numeric reports whether the root holds only digits.
func (r Root) Numeric() bool {
	for i := 0; i < len(r); i++ {
		if r[i] < '0' || r[i] > '9' {
			return false
		}
	}
	return true
}

// Int returns the numeric value of a numeric root, as the JSON contract emits
// it; ok is false for alphanumeric roots.
func (r Root) Int() (n int64, ok bool) {
	if !r.Numeric() {
		return 0, false
	}
	n, err := strconv.ParseInt(string(r), 10, 64)
	return n, err == nil
}

// String returns the 8 characters.
func (r Root) String() string { return string(r) }
