-- Corrections of accepted records (POST /v1/transactions/{id}/correct; docs: the
-- es-correct decisions): a second fiscal record of a transaction the authority accepted,
-- of the same document (VERI*FACTU: a RegistroAlta with Subsanacion S; SII: TipoComunicacion
-- A1), sent by the submit worker. The transaction keeps its one record (the unique index on
-- fiscal_records.transaction_id, which every reader of "the record of a transaction" relies
-- on): a correction's record belongs to no transaction row directly (transaction_id NULL,
-- kind `correction`) and is named by its correction below.
ALTER TABLE fiscal_records DROP CONSTRAINT IF EXISTS fiscal_records_kind_check;
ALTER TABLE fiscal_records ADD CONSTRAINT fiscal_records_kind_check
  CHECK (kind IN ('record', 'cancellation', 'closure', 'journal', 'correction'));
ALTER TABLE fiscal_records DROP CONSTRAINT IF EXISTS fiscal_records_transaction_kind;
ALTER TABLE fiscal_records ADD CONSTRAINT fiscal_records_transaction_kind
  CHECK (transaction_id IS NOT NULL OR kind IN ('closure', 'journal', 'correction'));

CREATE TABLE transaction_corrections (
  id              uuid PRIMARY KEY,
  transaction_id  uuid NOT NULL REFERENCES transactions (id),
  account_id      uuid NOT NULL,
  environment     text NOT NULL,
  -- The request's Idempotency-Key (generated when absent) and the hash of its body.
  idempotency_key text NOT NULL,
  request_hash    text NOT NULL,
  record_id       uuid NOT NULL REFERENCES fiscal_records (id),
  -- pending: stored, not answered yet; accepted; rejected: refused by the authority or out of retries.
  status          text NOT NULL CHECK (status IN ('pending', 'accepted', 'rejected')),
  -- What the correction changes (the request's fields) and the transaction's draft with them.
  changes         jsonb NOT NULL,
  draft           jsonb NOT NULL,
  -- The authority's answer, or the failure (error_code, raw_message).
  response        jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL,
  completed_at    timestamptz
);
CREATE UNIQUE INDEX transaction_corrections_idempotency ON transaction_corrections (account_id, environment, idempotency_key);
CREATE INDEX transaction_corrections_transaction ON transaction_corrections (transaction_id, created_at);
-- One correction of a transaction on its way at a time: the next one is built on what the
-- authority holds once this one is answered (and VERI*FACTU's S/S needs to know it was refused).
CREATE UNIQUE INDEX transaction_corrections_one_pending ON transaction_corrections (transaction_id) WHERE status = 'pending';
