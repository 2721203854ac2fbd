-- A cancellation the authority refused (or whose retries ran out) did not cancel its
-- original, which may be cancelled again (services/transactions.ts `cancel`): an original
-- may now have several cancellations, at most one of them not refused. One at a time is
-- kept by the idempotency key of each attempt (`cancel:<id>`, then `cancel:<id>:<n>`), unique
-- per account and environment; this index only serves the lookups.
DROP INDEX IF EXISTS transactions_one_cancellation;
CREATE INDEX transactions_cancels_idx ON transactions (cancels_id) WHERE cancels_id IS NOT NULL;
