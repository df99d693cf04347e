module github.com/cnpjgraph/cnpjgraph

go 1.26.0

require (
	github.com/google/uuid v1.6.0
	github.com/graph-gophers/dataloader/v7 v7.2.0
	github.com/jmoiron/sqlx v1.4.0
	github.com/lib/pq v1.12.3
	github.com/pressly/goose/v3 v3.29.0
)

require (
	github.com/mfridman/interpolate v0.0.2 // indirect
	github.com/sethvargo/go-retry v0.5.0 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
)
