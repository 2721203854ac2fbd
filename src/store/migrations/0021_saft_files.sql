-- Portugal SAF-T (PT): the monthly file of each location, produced once the month is closed
-- (batch processor `portugal/saft`, countries/pt-saft/month-file.ts) and kept as produced:
-- the inspector's GET /v1/locations/{id}/saft?period= serves these bytes for that month
-- ever after. One file per location, environment (test and live keys share locations)
-- and month (Lisbon calendar). Written once, never updated.
CREATE TABLE saft_files (
  id            uuid PRIMARY KEY,
  account_id    uuid NOT NULL REFERENCES accounts (id),
  environment   text NOT NULL CHECK (environment IN ('test', 'live')),
  location_id   uuid NOT NULL REFERENCES locations (id),
  period        text NOT NULL CHECK (period ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),  -- YYYY-MM
  file_name     text NOT NULL,                 -- SAFT_<NIF>_<YYYY-MM>.xml
  content       bytea NOT NULL,                -- the file, Windows-1252, byte for byte
  documents     integer NOT NULL,              -- SalesInvoices/NumberOfEntries
  total_debit   text NOT NULL,
  total_credit  text NOT NULL,
  run_id        text,                          -- the batch run that produced it
  created_at    timestamptz NOT NULL
);
CREATE UNIQUE INDEX saft_files_month_idx ON saft_files (location_id, environment, period);
-- Months with documents are found from the transactions of the system, per account.
CREATE INDEX transactions_saft_month_idx ON transactions (system, account_id, environment, created_at) WHERE system = 'pt-saft';
