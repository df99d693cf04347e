package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/cnpjgraph/cnpjgraph/model"
)

// qZip is the postal code lookup: per CEP, the most common address among
// the offices that give it, counting (municipality, street, district)
// together so the three belong to one place; a tie goes to the first
// street, district, municipality in byte order. The offices come through
// offices_zip, the index the import builds; abroad ones count not. low and
// high say whether the offices at that address agree on a number.
const qZip = `SELECT municipality, street, district, min(number COLLATE "C") AS low, max(number COLLATE "C") AS high
	FROM ` + LiveSchema + `.offices WHERE zip = $1 AND state IS DISTINCT FROM 'EX'
	GROUP BY municipality, street, district
	ORDER BY count(*) DESC, street COLLATE "C" NULLS LAST, district COLLATE "C" NULLS LAST, municipality COLLATE "C" NULLS LAST
	LIMIT 1`

// Zip returns a postal code of the live snapshot, derived from its offices
// (docs/api.md: the CEP's suffix decides which parts an answer carries);
// *NotFoundError when no office uses it. code must be 8 digits.
func (s *Store) Zip(ctx context.Context, code string) (model.Zip, error) {
	codes, err := s.Catalog.Current(ctx)
	if err != nil {
		return model.Zip{}, err
	}
	if code == "00000000" {
		return model.Zip{}, &NotFoundError{What: "zip code", Key: code}
	}
	var municipality, street, district, low, high *string
	err = s.Q.QueryRowxContext(ctx, qZip, code).Scan(&municipality, &street, &district, &low, &high)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return model.Zip{}, &NotFoundError{What: "zip code", Key: code}
	case err != nil:
		return model.Zip{}, fmt.Errorf("zip %s: %w", code, err)
	}
	z := model.Zip{Updated: codes.Updated(), Code: code}
	switch suffix := code[5:]; {
	case suffix >= "970":
		// Post office units and boxes: the offices' own addresses are
		// elsewhere in the municipality.
	case suffix >= "900" && suffix <= "959":
		// A large user's code: one address, whose number the offices give
		// when they all give the same.
		if low != nil && high != nil && *low == *high {
			z.Number = *low
		}
		fallthrough
	default:
		z.Street, z.District = deref(street), deref(district)
	}
	if m, ok := codes.municipalities[deref(municipality)]; ok {
		z.City, z.State = m.Text, m.State
		if m.IBGE > 0 {
			ibge := m.IBGE
			z.Municipality = &ibge
		}
	}
	return z, nil
}
