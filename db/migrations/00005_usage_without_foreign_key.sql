-- +goose Up
-- The usage ledger's rows come from authenticated requests only, so their
-- account exists; the foreign key checked it again for every row, locking
-- the account's row FOR KEY SHARE while the requests' debits update it:
-- each such lock made a MultiXact. Over 8 s of state + status + Simples
-- searches at 8 connections the ledger's COPY took 23-26 µs a row with the
-- key and 9 without (pg_stat_statements, two rounds each). No command
-- deletes an account; whoever deletes one by hand deletes its usage rows
-- too (DELETE FROM usage WHERE account_id = ...).
ALTER TABLE usage DROP CONSTRAINT usage_account_id_fkey;

-- +goose Down
ALTER TABLE usage ADD CONSTRAINT usage_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts (id) ON DELETE CASCADE;
