-- The chain ledger (src/ledger) appends every chained record, not only a transaction's:
-- France's closures and technical-event journal are chained, signed records written by a
-- schedule, with no transaction of their own. Their fiscal record has no transaction_id,
-- and its kind says what it is. A transaction's record keeps its one-to-one link (the
-- unique index on transaction_id ignores NULLs).
ALTER TABLE fiscal_records ALTER COLUMN transaction_id DROP NOT NULL;
ALTER TABLE fiscal_records DROP CONSTRAINT IF EXISTS fiscal_records_kind_check;
ALTER TABLE fiscal_records ADD CONSTRAINT fiscal_records_kind_check
  CHECK (kind IN ('record', 'cancellation', 'closure', 'journal'));
-- A record that belongs to no transaction must say so by its kind.
ALTER TABLE fiscal_records ADD CONSTRAINT fiscal_records_transaction_kind
  CHECK (transaction_id IS NOT NULL OR kind IN ('closure', 'journal'));

-- Inbound authority messages (services/inbound.ts) find their record by the id the
-- authority gave it, or, while it is still pending, by its fiscal id (the first
-- notification of an SDI invoice names its file). Partial indexes: records final at
-- creation (FR, PT) and most settled ones are in neither, so the create pays nothing.
CREATE INDEX transactions_upstream_idx ON transactions (system, fiscal_id_upstream) WHERE fiscal_id_upstream IS NOT NULL;
CREATE INDEX transactions_pending_fiscal_idx ON transactions (system, fiscal_id) WHERE status = 'pending';
