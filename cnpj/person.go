package cnpj

import (
	"strings"

	"github.com/google/uuid"
)

// PersonType classifies a member of a company, as the contract names them.
type PersonType string

// Person types.
const (
	Natural PersonType = "NATURAL"
	Legal   PersonType = "LEGAL"
	Foreign PersonType = "FOREIGN"
	Unknown PersonType = "UNKNOWN"
)

// personNamespace is the UUIDv5 namespace of person ids. It must never change:
// person ids are published and must stay stable across monthly imports.
var personNamespace = uuid.MustParse("5b0e1c2e-7f4a-5d3b-9c1e-2a6f0c3d8e41")

// PersonID returns the deterministic 36-character id of a person: a UUIDv5
// over its type, tax id and name, so the same person gets the same id in
// every company and every import.
func PersonID(t PersonType, taxID, name string) string {
	var b strings.Builder
	b.Grow(len(t) + len(taxID) + len(name) + 2)
	b.WriteString(string(t))
	b.WriteByte(0)
	b.WriteString(taxID)
	b.WriteByte(0)
	b.WriteString(name)
	return uuid.NewSHA1(personNamespace, []byte(b.String())).String()
}

// MaskedCPF reports whether s is a masked CPF as the registry publishes it:
// 11 characters, the first 3 and the last 2 are '*', the 6 in between digits.
func MaskedCPF(s string) bool {
	if len(s) != 11 || s[:3] != "***" || s[9:] != "**" {
		return false
	}
	for i := 3; i < 9; i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// NoCPF is the masked CPF the registry writes where there is no legal
// representative.
const NoCPF = "***000000**"
