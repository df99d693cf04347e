package auth

import (
	"fmt"
	"math/bits"
	"net/http"
	"strings"

	"github.com/cnpjgraph/cnpjgraph/service"
)

// The permission names are the service layer's (service.Permissions): a
// lookup's permission is decided there, with its price, in one table.
var (
	ReadOffice      = service.ReadOffice
	ReadCompany     = service.ReadCompany
	ReadPerson      = service.ReadPerson
	ReadRFB         = service.ReadRFB
	ReadSimples     = service.ReadSimples
	ReadCertificate = service.ReadCertificate
	ReadMap         = service.ReadMap
	ReadStreet      = service.ReadStreet
	ReadGraphQL     = service.ReadGraphQL
	ReadCCC         = service.ReadCCC
	ReadSuframa     = service.ReadSuframa
	ReadList        = service.ReadList
	WriteList       = service.WriteList
)

// AllPermissions lists every permission, in a stable order.
var AllPermissions = service.Permissions

// Permissions is a set of known permissions as a bit mask, so the check on
// every request is one AND.
type Permissions uint32

// All holds every permission.
var All = Permissions(1<<len(AllPermissions) - 1)

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
	out := make([]string, 0, bits.OnesCount32(uint32(p)))
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

// KeyHolds reports whether key k of account a holds permission: the
// account and the key must both hold it.
func KeyHolds(a Account, k Key, permission string) bool {
	return (permissionsOf(a.Permissions) & permissionsOf(k.Permissions)).Has(permission)
}

// signable are the permissions of the file routes a signed URL may open.
var signable = bit(ReadCertificate) | bit(ReadMap) | bit(ReadStreet) | bit(ReadList)

// DoorPermission is what a request needs before any lookup runs: the
// permission of /graphql itself. Every lookup, however it is reached,
// checks its own in the service layer (service.Meter).
func DoorPermission(r *http.Request) string {
	if r.URL.Path == "/graphql" {
		return ReadGraphQL
	}
	return ""
}

// FilePermission is the permission of a file route a signed URL may open,
// "" for every other path.
func FilePermission(path string) string {
	switch {
	case path == "/rfb/certificate", path == "/simples/certificate", path == "/ccc/certificate", path == "/suframa/certificate":
		return ReadCertificate
	case strings.HasPrefix(path, "/office/") && strings.HasSuffix(path, "/map"):
		return ReadMap
	case strings.HasPrefix(path, "/office/") && strings.HasSuffix(path, "/street"):
		return ReadStreet
	case strings.HasPrefix(path, "/list/") && strings.Count(path, "/") == 5 && strings.Contains(path, "/export/"):
		return ReadList // an export's file
	}
	return ""
}
