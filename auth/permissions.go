package auth

import (
	"fmt"
	"math/bits"
	"net/http"
	"strings"
)

// The permissions of the contract, <verb>:<resource>.
const (
	ReadOffice      = "read:office"
	ReadCompany     = "read:company"
	ReadPerson      = "read:person"
	ReadRFB         = "read:rfb"
	ReadSimples     = "read:simples"
	ReadCertificate = "read:certificate"
	ReadMap         = "read:map"
	ReadStreet      = "read:street"
	ReadGraphQL     = "read:graphql"
)

// AllPermissions lists every permission, in a stable order.
var AllPermissions = []string{ReadOffice, ReadCompany, ReadPerson, ReadRFB, ReadSimples, ReadCertificate, ReadMap, ReadStreet, ReadGraphQL}

// Permissions is a set of known permissions as a bit mask, so the check on
// every request is one AND.
type Permissions uint16

// All holds every permission.
const All = Permissions(1<<9 - 1)

func bit(name string) Permissions {
	for i, p := range AllPermissions {
		if p == name {
			return 1 << i
		}
	}
	return 0
}

// Has reports whether the set holds the permission name; an unknown name is never held.
func (p Permissions) Has(name string) bool {
	b := bit(name)
	return b != 0 && p&b != 0
}

// Names lists the permissions in the set.
func (p Permissions) Names() []string {
	out := make([]string, 0, bits.OnesCount16(uint16(p)))
	for i, name := range AllPermissions {
		if p&(1<<i) != 0 {
			out = append(out, name)
		}
	}
	return out
}

func (p Permissions) String() string {
	if p == All {
		return "all"
	}
	return strings.Join(p.Names(), ",")
}

// ParsePermissions turns names into a set, failing on an unknown name. It is
// for input an operator typed; stored lists go through permissionsOf.
func ParsePermissions(names []string) (Permissions, error) {
	var p Permissions
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		b := bit(n)
		if b == 0 {
			return 0, fmt.Errorf("unknown permission %q (known: %s)", n, strings.Join(AllPermissions, ", "))
		}
		p |= b
	}
	return p, nil
}

// permissionsOf reads a stored list: nil means all; unknown names grant nothing.
func permissionsOf(names []string) Permissions {
	if names == nil {
		return All
	}
	var p Permissions
	for _, n := range names {
		p |= bit(n)
	}
	return p
}

// signable are the permissions of the file routes a signed URL may open.
var signable = bit(ReadCertificate) | bit(ReadMap) | bit(ReadStreet)

// PermissionFor is RoutePermission of a request: the permissionFor argument
// of Middleware.
func PermissionFor(r *http.Request) string { return RoutePermission(r.URL.Path) }

// RoutePermission maps a request path of the documented API to the permission
// it needs, or "" for paths outside it (left to the router's 404).
func RoutePermission(path string) string {
	switch {
	case path == "/graphql":
		return ReadGraphQL
	case path == "/rfb":
		return ReadRFB
	case path == "/rfb/certificate", path == "/simples/certificate":
		return ReadCertificate
	case path == "/simples":
		return ReadSimples
	case strings.HasPrefix(path, "/office/"):
		switch {
		case strings.HasSuffix(path, "/map"):
			return ReadMap
		case strings.HasSuffix(path, "/street"):
			return ReadStreet
		}
		return ReadOffice
	case strings.HasPrefix(path, "/companies/"):
		return ReadOffice // the legacy shape of the office lookup
	case strings.HasPrefix(path, "/company/"):
		return ReadCompany
	case strings.HasPrefix(path, "/person/"):
		return ReadPerson
	}
	return ""
}
