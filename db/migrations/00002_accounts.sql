-- +goose Up
-- Accounts, credentials and usage (package auth).

-- A plan sets the daily credit allowance and the per-minute request rate.
CREATE TABLE plans (
    name                text    PRIMARY KEY,
    credits_per_day     bigint  NOT NULL CHECK (credits_per_day >= 0),
    requests_per_minute integer NOT NULL CHECK (requests_per_minute > 0)
);
INSERT INTO plans (name, credits_per_day, requests_per_minute) VALUES
    ('free', 100, 60),
    ('dev', 1000000, 1000000);

-- credits is the balance of the UTC day credits_day; a debit on a later day
-- first resets it to the plan allowance (the daily refill, done lazily).
-- permissions NULL means every permission.
CREATE TABLE accounts (
    id                bigserial   PRIMARY KEY,
    name              text        NOT NULL UNIQUE,
    plan              text        NOT NULL DEFAULT 'free' REFERENCES plans (name) ON UPDATE CASCADE,
    status            text        NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
    suspension_reason text,
    credits           bigint      NOT NULL CHECK (credits >= 0),
    credits_day       date        NOT NULL,
    permissions       text[],
    created_at        timestamptz NOT NULL DEFAULT now(),
    CHECK ((status = 'suspended') = (suspension_reason IS NOT NULL))
);

-- Only the SHA-256 of a key is stored; prefix is its first characters, for
-- telling keys apart in listings. permissions NULL means all the account holds.
CREATE TABLE api_keys (
    id          bigserial   PRIMARY KEY,
    account_id  bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    prefix      text        NOT NULL,
    hash        bytea       NOT NULL UNIQUE,
    name        text        NOT NULL DEFAULT '',
    permissions text[],
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);
CREATE INDEX api_keys_account ON api_keys (account_id);

-- One row per authenticated request: the route pattern, the credits finally
-- charged (0 when refunded) and the status answered. Written on every
-- request, so it carries a single index, the one its reports read by.
CREATE TABLE usage (
    account_id bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    route      text        NOT NULL,
    cost       integer     NOT NULL,
    status     smallint    NOT NULL,
    at         timestamptz NOT NULL
);
CREATE INDEX usage_account_at ON usage (account_id, at);

-- +goose Down
DROP TABLE usage;
DROP TABLE api_keys;
DROP TABLE accounts;
DROP TABLE plans;
