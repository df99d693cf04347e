-- +goose Up
-- A first page's count, priced and run in one round trip: the EXPLAIN of
-- the search (plan_query) gives PostgreSQL's estimate of its matches and
-- its price; a search expected within max_rows and priced within max_cost
-- is then counted (count_query: the bounded count and the first page's
-- keys). The caller sent these as two statements, each a round trip. The
-- caller's statement_timeout bounds both; a count priced within its budget
-- that still runs out of it loses the estimate too, and the caller asks
-- for it again.
-- +goose StatementBegin
CREATE FUNCTION search_priced_count(plan_query text, count_query text, max_rows bigint, max_cost float8,
    OUT estimate bigint, OUT cost float8, OUT counted bigint, OUT keys text[])
LANGUAGE plpgsql AS $$
DECLARE
    top text;
    m text[];
BEGIN
    -- The plan's first line is its top node: "Sort  (cost=1.00..2.50 rows=40 width=32)".
    EXECUTE plan_query INTO top;
    m := regexp_match(top, '\(cost=[0-9.]+\.\.([0-9.]+) rows=([0-9]+) ');
    IF m IS NULL THEN
        RAISE EXCEPTION 'search estimate: unexpected plan %', top;
    END IF;
    cost := m[1]::float8;
    estimate := m[2]::bigint;
    IF estimate <= max_rows AND cost <= max_cost THEN
        EXECUTE count_query INTO counted, keys;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION search_priced_count(text, text, bigint, float8);
