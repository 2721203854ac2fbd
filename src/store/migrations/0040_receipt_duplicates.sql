-- Numbered duplicates of a receipt (POST /v1/transactions/{id}/receipt/duplicate): a reprint
-- the law wants marked and counted (France: "duplicata", BOI-TVA-DECLA-30-10-30). One row a
-- copy; the primary key makes two racing reprints take two numbers, never the same one.
CREATE TABLE receipt_duplicates (
  transaction_id uuid        NOT NULL REFERENCES transactions (id),
  copy_number    integer     NOT NULL CHECK (copy_number >= 1),
  account_id     uuid        NOT NULL,
  created_at     timestamptz NOT NULL,
  PRIMARY KEY (transaction_id, copy_number)
);
