-- The tables of one imported snapshot, created without indexes in the staging
-- schema (search_path points at it). Keys are text: the 14-character CNPJ and
-- its 8-character root, ready for alphanumeric CNPJs. Codes stay as the
-- registry writes them (zero-padded text); their descriptions live in the code
-- tables, which are small and held in memory by the server.

CREATE UNLOGGED TABLE companies (
    root                 text NOT NULL,      -- also the company id
    name                 text NOT NULL,
    nature               text,               -- natureza jurídica, 4 digits
    responsible_role     text,               -- qualificação do responsável
    equity               numeric,            -- capital social, exact
    size                 text,               -- porte: 00, 01, 03, 05
    jurisdiction         text                -- ente federativo responsável
);

CREATE UNLOGGED TABLE offices (
    tax_id               text NOT NULL,      -- 14 characters
    root                 text NOT NULL,
    head                 boolean NOT NULL,
    alias                text,
    status               text,               -- situação cadastral, 2 digits
    status_date          date,
    reason               text,               -- motivo da situação
    city_abroad          text,
    country              text,               -- RFB país code (EX addresses)
    founded              date,
    main_activity        text,               -- CNAE, 7 digits
    side_activities      text[],
    street               text,               -- tipo + logradouro
    number               text,
    details              text,
    district             text,
    zip                  text,
    state                text,
    municipality         text,               -- RFB/SIAFI 4-digit code
    phones               text[],             -- area and number, alternating
    email                text,
    special              text,               -- situação especial (free text)
    special_date         date
);

-- Persons, one row per distinct (type, tax id, name); id is the UUIDv5 of those.
CREATE UNLOGGED TABLE persons (
    id                   text NOT NULL,
    type                 text NOT NULL,      -- NATURAL, LEGAL, FOREIGN, UNKNOWN
    tax_id               text,               -- masked CPF or CNPJ; null for foreigners
    name                 text NOT NULL,
    age                  text,               -- faixa etária code 1-9; null when unknown
    country              text                -- RFB país code (foreign persons)
);

CREATE UNLOGGED TABLE members (
    root                 text NOT NULL,
    position             integer NOT NULL,   -- order in the dump, for a stable listing
    person_id            text NOT NULL,
    role                 text,               -- qualificação, 2 digits
    since                date,
    agent_person_id      text,               -- representante legal
    agent_role           text
);

CREATE UNLOGGED TABLE simples (
    root                 text NOT NULL,
    simples_optant       boolean NOT NULL,
    simples_since        date,
    simples_until        date,
    simei_optant         boolean NOT NULL,
    simei_since          date,
    simei_until          date
);

-- Closed enrolment periods; each import adds the ones it sees to the previous
-- snapshot's, so the history accumulates across imports.
CREATE UNLOGGED TABLE simples_periods (
    root                 text NOT NULL,
    regime               text NOT NULL,      -- SIMPLES or SIMEI
    since                date NOT NULL,
    until                date NOT NULL
);

-- Code tables, as the dump delivers them.
CREATE UNLOGGED TABLE activities     (code text PRIMARY KEY, text text);
CREATE UNLOGGED TABLE natures        (code text PRIMARY KEY, text text);
CREATE UNLOGGED TABLE reasons        (code text PRIMARY KEY, text text);
CREATE UNLOGGED TABLE roles          (code text PRIMARY KEY, text text);
CREATE UNLOGGED TABLE countries      (code text PRIMARY KEY, text text, m49 integer);
CREATE UNLOGGED TABLE municipalities (code text PRIMARY KEY, text text, ibge integer, state text);
