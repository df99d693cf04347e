-- +goose Up
-- CNPJá's lists (the official client's list service): an account's lists of
-- tax ids, or of a search kept with a limit until its first export resolves
-- it, and their exports as files. They outlive imports, as accounts do.
-- account_id 0 is a server without accounts (AUTH_DISABLED); no foreign key,
-- as for usage: no command deletes an account.
CREATE TABLE lists (
    id          uuid        PRIMARY KEY,
    account_id  bigint      NOT NULL,
    created     timestamptz NOT NULL,
    updated     timestamptz NOT NULL,
    title       text        NOT NULL,
    description text,
    query       jsonb,
    query_limit integer,
    items       text[]      NOT NULL DEFAULT '{}',
    size        integer     NOT NULL DEFAULT 0
);
CREATE INDEX lists_account ON lists (account_id, created, id);

-- An export runs in the background: whichever serving instance claims it
-- (FOR UPDATE SKIP LOCKED) keeps heartbeat fresh; one whose heartbeat went
-- stale (its instance stopped) is claimed again from the start.
CREATE TABLE list_exports (
    id            uuid        PRIMARY KEY,
    list_id       uuid        NOT NULL REFERENCES lists (id) ON DELETE CASCADE,
    created       timestamptz NOT NULL,
    updated       timestamptz NOT NULL,
    status        text        NOT NULL CHECK (status IN ('PENDING', 'PROCESSING', 'PROCESSED', 'EXPORTING', 'COMPLETED', 'FAILED')),
    status_reason text,
    progress      real        NOT NULL DEFAULT 0,
    options       jsonb       NOT NULL,
    heartbeat     timestamptz
);
CREATE INDEX list_exports_list ON list_exports (list_id, created, id);
CREATE INDEX list_exports_pending ON list_exports (created) WHERE status NOT IN ('COMPLETED', 'FAILED');

-- A file of a completed export, in parts of at most a MiB each (bytea is
-- read whole), served in part order.
CREATE TABLE list_export_files (
    export_id uuid    NOT NULL REFERENCES list_exports (id) ON DELETE CASCADE,
    type      text    NOT NULL CHECK (type IN ('EXCEL', 'JSON_ZIP')),
    part      integer NOT NULL,
    data      bytea   NOT NULL,
    PRIMARY KEY (export_id, type, part)
);

-- Page tokens of GET /list and GET /list/{listId}/export: the page after a
-- given record of one listing (an account's lists matching search, or a
-- list's exports). They expire after a day.
CREATE TABLE list_pages (
    token       text        PRIMARY KEY,
    account_id  bigint      NOT NULL,
    list_id     uuid,
    search      text        NOT NULL DEFAULT '',
    page_limit  integer     NOT NULL,
    after_created timestamptz NOT NULL,
    after_id    uuid        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX list_pages_created ON list_pages (created_at);

-- +goose Down
DROP TABLE list_pages;
DROP TABLE list_export_files;
DROP TABLE list_exports;
DROP TABLE lists;
