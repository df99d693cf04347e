package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/lib/pq"

	"github.com/cnpjgraph/cnpjgraph/model"
)

// ErrNoZips means the live snapshot was imported before postal codes were
// derived: a new import brings them.
var ErrNoZips = errors.New("the live snapshot has no postal codes: it was imported by an older version")

// Zip returns a postal code of the live snapshot, *NotFoundError when no
// office uses it.
func (s *Store) Zip(ctx context.Context, code string) (model.Zip, error) {
	codes, err := s.Catalog.Current(ctx)
	if err != nil {
		return model.Zip{}, err
	}
	const query = `SELECT municipality, street, number, district FROM ` + LiveSchema + `.zips WHERE code = $1`
	var municipality, street, number, district *string
	err = s.Q.QueryRowxContext(ctx, query, code).Scan(&municipality, &street, &number, &district)
	var pqErr *pq.Error
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return model.Zip{}, &NotFoundError{What: "zip code", Key: code}
	case errors.As(err, &pqErr) && pqErr.Code == "42P01": // undefined_table
		return model.Zip{}, ErrNoZips
	case err != nil:
		return model.Zip{}, fmt.Errorf("zip %s: %w", code, err)
	}
	z := model.Zip{
		Updated:  codes.Updated(),
		Code:     code,
		Street:   deref(street),
		Number:   deref(number),
		District: deref(district),
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
