-- Batch processor runs (spec "Batch result", "Batch" endpoints): one row per processor
-- run for one account and environment, whether started by POST /v1/admin/process-pending
-- or by the daily schedule. GET /v1/admin/batch-stats sums the rows of the last 24 hours
-- (spec Limits "Batch stats window").
CREATE TABLE batch_runs (
  id               uuid PRIMARY KEY,
  processor        text NOT NULL,                 -- e.g. spain/lroe
  account_id       uuid NOT NULL REFERENCES accounts (id),
  environment      text NOT NULL CHECK (environment IN ('test', 'live')),
  trigger          text NOT NULL CHECK (trigger IN ('manual', 'scheduled')),
  -- failed: the processor stopped on an unexpected error (the counters hold what it did before).
  status           text NOT NULL CHECK (status IN ('completed', 'failed')),
  batches_created  integer NOT NULL,
  batches_retried  integer NOT NULL,
  accepted         integer NOT NULL,
  rejected         integer NOT NULL,
  failed           integer NOT NULL,
  errors_count     integer NOT NULL,
  duration_ms      integer NOT NULL,
  failure_rate     double precision NOT NULL,
  alert_triggered  boolean NOT NULL,
  -- Per authority request: issuer, kind, year, records, registration number, answer type.
  requests         jsonb NOT NULL DEFAULT '[]'::jsonb,
  -- Batch-level errors: code, message, issuer, kind, how many records it held back.
  errors           jsonb NOT NULL DEFAULT '[]'::jsonb,
  started_at       timestamptz NOT NULL,
  finished_at      timestamptz NOT NULL
);
CREATE INDEX batch_runs_account_idx ON batch_runs (account_id, environment, processor, started_at DESC);
