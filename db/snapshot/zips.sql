-- The postal codes of the offices (GET /zip/:code), run once the offices
-- are loaded. Per CEP, the most common (municipality, street, district)
-- among the offices that give it, counted as one address; a tie goes to the
-- first in byte order of street, district, municipality. The CEP's suffix
-- (its last 3 digits, as the Correios assign them) decides the rest:
--   000-899 a street or a stretch of one: street and district;
--   900-959 one address (a large user): also the number, when every office
--           at that address gives the same one;
--   960-969 promotional codes: as a street's;
--   970-999 post office units and boxes: no street, number or district (the
--           offices' own addresses are elsewhere): the municipality only.
-- Offices abroad, and CEPs that are not 8 digits or all zeros, count not.
-- Grouped by sort rather than by hash, in byte order (COLLATE "C"): one
-- sort of the offices, and the groups come out in CEP order for the pick.
INSERT INTO zips (code, municipality, street, number, district)
SELECT DISTINCT ON (code) code, municipality,
    CASE WHEN suffix < '970' THEN street END,
    CASE WHEN suffix BETWEEN '900' AND '959' AND low = high THEN low END,
    CASE WHEN suffix < '970' THEN district END
FROM (
    SELECT zip COLLATE "C" AS code, right(zip, 3) COLLATE "C" AS suffix, municipality COLLATE "C" AS municipality,
        street COLLATE "C" AS street, district COLLATE "C" AS district,
        count(*) AS n, min(number COLLATE "C") AS low, max(number COLLATE "C") AS high
    FROM offices
    WHERE zip ~ '^[0-9]{8}$' AND zip <> '00000000' AND state <> 'EX'
    GROUP BY 1, 2, 3, 4, 5
) AS g
ORDER BY code, n DESC, street NULLS LAST, district NULLS LAST, municipality NULLS LAST
