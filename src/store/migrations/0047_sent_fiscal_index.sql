-- An authority's later message (services/inbound.ts, the SdI notifications) finds its
-- record by fiscal id (the SdI file name) among the records that were sent, in any status
-- the message may still move (pending, processing, failed, failed_permanent…), not only
-- `pending`: the partial index of 0017 no longer serves that lookup.
CREATE INDEX transactions_sent_fiscal_idx ON transactions (system, fiscal_id) WHERE submitted_at IS NOT NULL;
DROP INDEX IF EXISTS transactions_pending_fiscal_idx;
