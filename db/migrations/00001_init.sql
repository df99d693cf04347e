-- +goose Up
-- Tables that live across monthly imports. The imported registry itself lives
-- in the schema "cnpj", which each import replaces as a whole (see db/snapshot).

-- One row per import attempt; the row with state 'live' describes the data served.
CREATE TABLE snapshots (
    id             bigserial PRIMARY KEY,
    state          text        NOT NULL CHECK (state IN ('loading', 'live', 'retired', 'failed')),
    dump_month     text        NOT NULL,          -- YYYY-MM of the dump
    reference_date date        NOT NULL,          -- the data's own date; cached answers carry it as updated
    sources        text[]      NOT NULL DEFAULT '{}',
    row_counts     jsonb       NOT NULL DEFAULT '{}',
    rejected_rows  jsonb       NOT NULL DEFAULT '{}',
    started_at     timestamptz NOT NULL DEFAULT now(),
    finished_at    timestamptz,
    error          text
);
CREATE UNIQUE INDEX snapshots_one_live ON snapshots (state) WHERE state = 'live';

-- Stable small ids for the free-text "situação especial" of the registry.
CREATE TABLE special_statuses (
    id   serial PRIMARY KEY,
    text text NOT NULL UNIQUE
);

-- Records fetched online, per tax id and portal; they survive imports and a
-- lookup serves the newer of overlay and snapshot.
CREATE TABLE overlay_records (
    tax_id  text        NOT NULL,
    portal  text        NOT NULL,
    updated timestamptz NOT NULL,
    body    jsonb       NOT NULL,
    PRIMARY KEY (tax_id, portal)
);

-- +goose Down
DROP TABLE overlay_records;
DROP TABLE special_statuses;
DROP TABLE snapshots;
