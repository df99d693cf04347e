-- The tables of one imported snapshot, created without indexes in the staging
-- schema (search_path points at it). Keys are text: the 14-character CNPJ and
-- its 8-character root, ready for alphanumeric CNPJs. Codes stay as the
-- registry writes them (zero-padded text); their descriptions live in the code
-- tables, which are small and held in memory by the server.
-- Keys, indexed codes and search words are COLLATE "C": they are digits,
-- A-Z and a-z without accents, byte order is their order, and it makes the
-- index builds and the persons' dedupe sort several times cheaper than a
-- locale collation. Tables are logged: an unlogged table is
-- emptied by a server crash and not streamed to replicas, and measured on a
-- 1M-establishment dump logging did not slow the import down.

CREATE TABLE companies (
    root                 text COLLATE "C" NOT NULL,      -- also the company id
    name                 text NOT NULL,
    nature               text,               -- natureza jurídica, 4 digits
    responsible_role     text,               -- qualificação do responsável
    equity               numeric,            -- capital social, exact
    size                 text,               -- porte: 00, 01, 03, 05
    jurisdiction         text,               -- ente federativo responsável
    name_words           text[] COLLATE "C", -- the name's search words (package words)
    name_sig             bigint NOT NULL DEFAULT 0, -- their words.Signature (office_signatures)
    -- Folded in by the import (db/fold.go), so an office lookup reads two
    -- rows: the Simples row's enrolment (null without one), and the members
    -- with their persons, a member per row of a two-dimensional array.
    simples_optant       boolean,
    simples_since        date,
    simei_optant         boolean,
    simei_since          date,
    members              text[]
);

CREATE TABLE offices (
    tax_id               text COLLATE "C" NOT NULL,      -- 14 characters
    root                 text COLLATE "C" NOT NULL,
    head                 boolean NOT NULL,
    alias                text,
    status               text,               -- situação cadastral, 2 digits
    status_date          date,
    reason               text,               -- motivo da situação
    city_abroad          text,
    country              text,               -- RFB país code (EX addresses)
    founded              date,
    main_activity        text COLLATE "C",   -- CNAE, 7 digits
    side_activities      text[],
    street               text,               -- tipo + logradouro
    number               text,
    details              text,
    district             text,
    zip                  text COLLATE "C", -- CEP, 8 digits (byte order: the postal code lookup's index)
    state                text COLLATE "C",
    municipality         text COLLATE "C",   -- RFB/SIAFI 4-digit code
    phones               text[],             -- area and number, alternating
    email                text,
    special              text,               -- situação especial (free text)
    special_date         date,
    alias_words          text[] COLLATE "C", -- the alias's search words
    alias_sig            bigint NOT NULL DEFAULT 0 -- their words.Signature (office_signatures)
);

-- Persons, one row per distinct (type, tax id, name); id is the UUIDv5 of those.
CREATE TABLE persons (
    id                   text COLLATE "C" NOT NULL,
    type                 text NOT NULL,      -- NATURAL, LEGAL, FOREIGN, UNKNOWN
    tax_id               text,               -- masked CPF or CNPJ; null for foreigners
    name                 text NOT NULL,
    age                  text,               -- faixa etária code 1-9; null when unknown
    country              text,               -- RFB país code (foreign persons)
    name_words           text[] COLLATE "C"  -- the name's search words
);

CREATE TABLE members (
    root                 text COLLATE "C" NOT NULL,
    position             integer NOT NULL,   -- order in the dump, for a stable listing
    person_id            text COLLATE "C" NOT NULL,
    role                 text,               -- qualificação, 2 digits
    since                date,
    agent_person_id      text COLLATE "C",               -- representante legal
    agent_role           text
);

CREATE TABLE simples (
    root                 text COLLATE "C" NOT NULL,
    simples_optant       boolean NOT NULL,
    simples_since        date,
    simples_until        date,
    simei_optant         boolean NOT NULL,
    simei_since          date,
    simei_until          date
);

-- Closed enrolment periods; each import adds the ones it sees to the previous
-- snapshot's, so the history accumulates across imports.
CREATE TABLE simples_periods (
    root                 text COLLATE "C" NOT NULL,
    regime               text COLLATE "C" NOT NULL,      -- SIMPLES or SIMEI
    since                date NOT NULL,
    until                date NOT NULL
);

-- Code tables, as the dump delivers them (activity and municipality codes
-- COLLATE "C" as the offices' columns that join them).
CREATE TABLE activities     (code text COLLATE "C" PRIMARY KEY WITH (fillfactor = 100), text text);
CREATE TABLE natures        (code text PRIMARY KEY WITH (fillfactor = 100), text text);
CREATE TABLE reasons        (code text PRIMARY KEY WITH (fillfactor = 100), text text);
CREATE TABLE roles          (code text PRIMARY KEY WITH (fillfactor = 100), text text);
CREATE TABLE countries      (code text PRIMARY KEY WITH (fillfactor = 100), text text, m49 integer);
CREATE TABLE municipalities (code text COLLATE "C" PRIMARY KEY WITH (fillfactor = 100), text text, ibge integer, state text);

