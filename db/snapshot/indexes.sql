-- Built after the load, before the swap. The primary keys are built as
-- unique indexes, which lock their table against writes only, so that the
-- import builds several indexes of a table at once, and made the tables'
-- primary keys at the end (ADD CONSTRAINT ... USING INDEX: no second build).
-- The companies' key includes their name's words signature: a name search
-- walks the companies by root from this index alone (see db/signatures.go).
-- A snapshot is never written after its import, so its b-trees are packed
-- full (fillfactor 100, not the 90 that leaves room for inserts): 10 % less
-- of them to store and to cache.
CREATE UNIQUE INDEX companies_pkey ON companies (root) INCLUDE (name_sig) WITH (fillfactor = 100);
CREATE UNIQUE INDEX offices_pkey ON offices (tax_id) WITH (fillfactor = 100);
CREATE INDEX offices_root ON offices (root, tax_id) WITH (fillfactor = 100);
-- The offices in key order with their alias's words signature and the
-- filters of their own columns that no index leads (a status, a CEP, head
-- or branch) beside it: a name's walk of the aliases (db/search.go,
-- walkPage) and a page of such a filter walk this index alone, not a heap
-- page an office (the dump's order is not the key's). On the bench dump a
-- CEP range's first page read 161 buffers for the 3,154 offices walked,
-- against 2,630; a name's page 130 instead of 524. Not the dates probed
-- as bounds (founded, status_date: see rangeScan): with them here a rare
-- founding range's few offices beside a large status date range were
-- read by walking this whole index (1,015 buffers for one office, in
-- TestRareBoundsPagesFromTheirIndexes), where their keys' probes read a
-- few. Not offices_root made wider: with that one index-only and wide,
-- PostgreSQL drove a name's companies branch from it, reading every
-- office after the page's key for a name no company has (760 buffers of
-- 100,000 offices, against 4 by a merge join on the narrow one).
CREATE INDEX offices_walk ON offices (root, tax_id) INCLUDE (alias_sig, status, zip, head) WITH (fillfactor = 100);
CREATE UNIQUE INDEX persons_pkey ON persons (id) WITH (fillfactor = 100);
-- A person's memberships in order, their role and date in the index: a
-- page of them reads the index alone (index-only, the table being all
-- visible), not a members row per membership (pgbench of a two-person
-- page: 13,700 -> 20,700 statements/s; 34 MB against 31).
CREATE INDEX members_person ON members (person_id, root, position) INCLUDE (role, since) WITH (fillfactor = 100);
CREATE INDEX members_agent ON members (agent_person_id) WITH (fillfactor = 100) WHERE agent_person_id IS NOT NULL;
CREATE UNIQUE INDEX simples_pkey ON simples (root) WITH (fillfactor = 100);
CREATE UNIQUE INDEX simples_periods_pkey ON simples_periods (root, regime, since) WITH (fillfactor = 100);
-- The postal code lookup (GET /zip/:code) reads a CEP's offices through it.
CREATE INDEX offices_zip ON offices (zip) WITH (fillfactor = 100);
-- Search (GET /office, GET /person; docs/api.md "Search"). Names match by
-- words: each name's words array, GIN-indexed, answers "every word of the
-- value occurs" (@>) without reading the rows that lack one. The
-- companies' index holds their facts too, as words of a second column
-- (db/search.go, companyFacts: the same expression), so that a name with
-- a Simples or SIMEI option, a size or a legal nature reads only the
-- companies that have both: "igreja" with the Simples optants, none on
-- the bench dump, 1.9 ms instead of 40 (the word's 9,788 companies read).
-- It costs the build 0.1-0.4 s of 1.6-1.9 and the index 12 % more.
CREATE INDEX companies_name_words ON companies USING gin (name_words,
    (array_remove(ARRAY[CASE WHEN simples_optant THEN 'simples' END, CASE WHEN simei_optant THEN 'simei' END,
        'size' || size, 'nature' || nature], NULL)));
CREATE INDEX offices_alias_words ON offices USING gin (alias_words) WHERE alias_words IS NOT NULL;
CREATE INDEX persons_name_words ON persons USING gin (name_words);
-- Codes searched on their own or together: activity within a municipality,
-- a municipality's offices, an activity's offices, an e-mail domain.
-- An activity within a municipality in key order, as for a state: a page
-- reads its 11 from the index alone. On (municipality, main_activity) a
-- pair of many offices walked all offices in key order for them (3,150
-- read for a page of one of 35,000 on a 10M dump) and one of few sorted
-- them; one at a time over the bench's 100 pairs, p99 16.6 -> 3.1 ms on
-- the bench dump and 15.2 -> 4.7 on ten times it, for 51 MB instead of 7.
CREATE INDEX offices_municipality ON offices (municipality, main_activity, root, tax_id) WITH (fillfactor = 100);
-- The offices of a side activity: a search of codes rarer than
-- PostgreSQL's statistics list reads them here and sorts them (see
-- Codes.UnlistedSideActivities), where it walked every office in key
-- order for a code none has (10M offices: past the request's deadline).
CREATE INDEX offices_side_activities ON offices USING gin (side_activities);
-- A state's offices in key order: a search by state (with a name word,
-- a status...) walks only that state's offices, in the order of its pages.
CREATE INDEX offices_state ON offices (state, root, tax_id) WITH (fillfactor = 100);
-- An activity within a state in key order, as within a municipality: a
-- page reads its 11 from the index alone, and its count reads the pair's
-- range (at most the count's limit of it). On (main_activity) alone
-- PostgreSQL ANDed the activity's bitmap with the state's for the count
-- (15,000 and 33,000 offices: 10 ms, past the count's budget, so the
-- answer gave an estimate) and walked one of them for the page; one at a
-- time over 100 pairs of the bench dump, p50 14.0 -> 2.7 ms. An activity
-- alone reads the same index's prefix, as it read the old one.
CREATE INDEX offices_activity ON offices (main_activity, state, root, tax_id) WITH (fillfactor = 100);
-- A domain's offices in key order, as for a state: a domain's offices sit
-- together (one company's), so a walk of all offices in key order, which
-- the planner expects to meet them spread evenly, read 380,000 offices
-- (0.5 s) for a domain of 1,845; this index reads the page's 11.
CREATE INDEX offices_email_domain ON offices ((lower(split_part(email, '@', 2))), root, tax_id) WITH (fillfactor = 100) WHERE email IS NOT NULL;
-- The planner ignores a partial index's statistics: without these it takes
-- every domain for 0.5% of the offices and walks the whole table in tax id
-- order for a domain of 20 (300 ms instead of 0.4 ms).
CREATE STATISTICS offices_email_domain_stats ON (lower(split_part(email, '@', 2))) FROM offices;
-- An address's offices in key order (emails.address.in: which companies
-- share this e-mail?). Without it a page walked the offices in key order
-- testing each: for an address no office has, all 10M of a 10M dump
-- until the request's deadline (504); with it, a few ms. The statistics,
-- as for the domain: the planner ignores the partial index's own.
CREATE INDEX offices_email ON offices ((upper(email)), root, tax_id) WITH (fillfactor = 100) WHERE email IS NOT NULL;
CREATE STATISTICS offices_email_stats ON (upper(email)) FROM offices;
-- An office's two phone numbers (phones holds area, number, area,
-- number; the importer leaves the fax out), for phones.number.in (which
-- offices share this number?): without them a page walked the offices
-- testing each (a number none has: 504 on a 10M dump). The statistics, as
-- for the e-mail: the planner ignores a partial index's own.
CREATE INDEX offices_phone1 ON offices ((phones[2])) WITH (fillfactor = 100) WHERE phones[2] IS NOT NULL;
CREATE INDEX offices_phone2 ON offices ((phones[4])) WITH (fillfactor = 100) WHERE phones[4] IS NOT NULL;
CREATE STATISTICS offices_phone1_stats ON (phones[2]) FROM offices;
CREATE STATISTICS offices_phone2_stats ON (phones[4]) FROM offices;
-- The persons abroad by country (country.id.in; 2 % of the persons):
-- without it a page walked the persons in id order testing each, all of
-- them for a country none is from (4M persons of a 10M dump: 1-2 s). The
-- statistics, as for the e-mail: the planner ignores a partial index's own.
CREATE INDEX persons_country ON persons ((ltrim(country, '0')), id) WITH (fillfactor = 100) WHERE country IS NOT NULL;
CREATE STATISTICS persons_country_stats ON (ltrim(country, '0')) FROM persons;
-- The bounds (founded.lte, company.equity.gte, statusDate.gte...): each
-- column searched by a range has its b-tree, so that a range few offices
-- fall in reads them and sorts them. Without them a page walked the
-- offices in key order testing each: the oldest companies, the largest
-- equities, last month's status changes read the whole registry for 11
-- (bench dump: 0.2-0.7 s; a 10M dump: 7 s to a 504). A search probes a
-- bound's range here first and collects a small one (db/ranges.go); the
-- catalog looks for offices_founded to know the snapshot has them all.
CREATE INDEX offices_founded ON offices (founded) WITH (fillfactor = 100);
CREATE INDEX offices_status_date ON offices (status_date) WITH (fillfactor = 100);
CREATE INDEX offices_special_date ON offices (special_date) WITH (fillfactor = 100) WHERE special_date IS NOT NULL;
CREATE INDEX companies_equity ON companies (equity) WITH (fillfactor = 100);
-- A company's legal nature (company.nature.id.in): most natures are rare
-- (public bodies, cooperatives, foundations: a few thousand companies
-- each, against the hundreds of thousands of the two commonest), and a
-- rare one with an office filter it excludes (an activity, a size) made
-- a page's collect read every company to find them (bench dump: 210-250
-- ms a page, past the walk budget; with it 6-11). With the size and the
-- root beside the nature, the nature's companies are read from the index
-- alone: with the nature alone, PostgreSQL read their rows from the heap
-- (at ten times the dump, 37,000 pages for 40,000 companies: 290 ms, where
-- the walk it replaced took 45), here 5 ms. 28 MB on the bench dump (1.0 s
-- to build), 281 MB at ten times it.
CREATE INDEX companies_nature ON companies (nature, size) INCLUDE (root) WITH (fillfactor = 100);
CREATE INDEX simples_since ON simples (simples_since) WITH (fillfactor = 100) WHERE simples_optant;
CREATE INDEX simei_since ON simples (simei_since) WITH (fillfactor = 100) WHERE simei_optant;
-- The primary keys, from their unique indexes.
ALTER TABLE companies ADD CONSTRAINT companies_pkey PRIMARY KEY USING INDEX companies_pkey;
ALTER TABLE offices ADD CONSTRAINT offices_pkey PRIMARY KEY USING INDEX offices_pkey;
ALTER TABLE persons ADD CONSTRAINT persons_pkey PRIMARY KEY USING INDEX persons_pkey;
ALTER TABLE simples ADD CONSTRAINT simples_pkey PRIMARY KEY USING INDEX simples_pkey;
ALTER TABLE simples_periods ADD CONSTRAINT simples_periods_pkey PRIMARY KEY USING INDEX simples_periods_pkey;
