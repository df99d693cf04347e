-- +goose Up
-- Every search page mints a token, and a logged insert waits for its WAL
-- flush at commit: on the search mix that wait cost 15 % of the throughput
-- (state + status + Simples: 571-613 -> 671-722 req/s, interleaved). A
-- token is worth less than that: PostgreSQL empties an unlogged table after
-- a crash, and a token lost so answers as an expired one does (start the
-- search again). Standbys do not get the table; the service reads the
-- primary.
ALTER TABLE search_tokens SET UNLOGGED;

-- +goose Down
ALTER TABLE search_tokens SET LOGGED;
