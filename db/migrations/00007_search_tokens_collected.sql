-- +goose Up
-- Whether the pages of a token's search are collected (read whole through
-- their filters' indexes and sorted) rather than walked in key order: set
-- when a page's walk ran out of SEARCH_WALK_BUDGET and was collected, so
-- that the next page collects at once instead of spending the budget
-- again. A constant default: no rewrite of the table.
ALTER TABLE search_tokens ADD COLUMN collected boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE search_tokens DROP COLUMN collected;
