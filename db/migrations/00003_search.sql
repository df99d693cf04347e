-- +goose Up
-- Page tokens of the searches (GET /office, GET /person; GraphQL
-- searchOffices, searchPersons). A token is the page after a given record of
-- one search on one snapshot: the search's canonical parameters, the
-- snapshot it started on, the key of the last record given, and the count
-- found on the first page. Tokens are minted per page and expire after
-- SEARCH_TOKEN_TTL, or as soon as their snapshot is no longer live.
CREATE TABLE search_tokens (
    token       text        PRIMARY KEY,
    kind        text        NOT NULL CHECK (kind IN ('office', 'person')),
    params      text        NOT NULL,
    snapshot_id bigint      NOT NULL,
    after_key   text        COLLATE "C" NOT NULL,
    total       bigint      NOT NULL,
    exact       boolean     NOT NULL,
    page_limit  integer     NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX search_tokens_created ON search_tokens (created_at);

-- +goose Down
DROP TABLE search_tokens;
