package db_test

import (
	"context"
	"testing"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
)

func TestMigrateTwice(t *testing.T) {
	d, _ := dbtest.New(t)
	if err := db.Migrate(context.Background(), d); err != nil {
		t.Fatalf("second migrate: %v", err)
	}
	var n int
	if err := d.Get(&n, "SELECT count(*) FROM snapshots"); err != nil || n != 0 {
		t.Fatalf("snapshots: %d, %v", n, err)
	}
}

func TestSnapshotDDL(t *testing.T) {
	d, _ := dbtest.New(t)
	for _, q := range []string{"CREATE SCHEMA s; SET search_path TO s", db.SnapshotTables, db.SnapshotIndexes} {
		if _, err := d.Exec(q); err != nil {
			t.Fatalf("%v", err)
		}
	}
}
