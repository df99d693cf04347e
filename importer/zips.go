package importer

import (
	"strings"

	"github.com/cnpjgraph/cnpjgraph/db"
)

// zipsSQL fills the staging schema's postal codes from its offices
// (db/snapshot/zips.sql says how), without its comments so the row count
// is recorded under "zips".
var zipsSQL = withoutComments(db.SnapshotZips)

func withoutComments(sql string) string {
	var lines []string
	for _, l := range strings.Split(sql, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "--") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}
