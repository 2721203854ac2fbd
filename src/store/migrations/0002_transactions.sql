-- Transactions, their fiscal records and hash chains, and the job queue (transactional outbox).

CREATE TABLE transactions (
  id                 uuid PRIMARY KEY,
  account_id         uuid NOT NULL REFERENCES accounts (id),
  location_id        uuid NOT NULL REFERENCES locations (id),
  environment        text NOT NULL CHECK (environment IN ('test', 'live')),
  type               text NOT NULL CHECK (type IN ('sale', 'refund', 'void', 'cancellation')),
  status             text NOT NULL,
  amount             bigint NOT NULL,            -- total in minor units
  currency           text NOT NULL,
  country            text NOT NULL,
  system             text NOT NULL,
  idempotency_key    text NOT NULL,
  request_hash       text NOT NULL,              -- SHA-256 of the canonical request, for idempotent replays
  request_payload    jsonb NOT NULL,             -- what the client sent
  normalized         jsonb NOT NULL,             -- the canonical form the record was built from
  response_payload   jsonb NOT NULL DEFAULT '{}'::jsonb,
  fiscal_id          text,
  fiscal_id_upstream text,
  error_message      text,
  render_hints       jsonb NOT NULL DEFAULT '[]'::jsonb,
  sandbox_mode       text CHECK (sandbox_mode IN ('stub', 'authority')),
  cancels_id         uuid REFERENCES transactions (id),   -- on a cancellation: the original
  cancelled_by_id    uuid REFERENCES transactions (id),   -- on an original: its cancellation
  deadline_at        timestamptz,                -- legal submission deadline, where one applies
  offline_until      timestamptz,                -- Greece: end of the offline grace window
  submitted_at       timestamptz,
  completed_at       timestamptz,
  created_at         timestamptz NOT NULL,
  updated_at         timestamptz NOT NULL
)
-- A transaction row is updated a few times after its insert (processing, then the outcome):
-- free space on its page lets those be HOT updates (no index rewrites). No index covers
-- `status` for the same reason; status filters ride on the account index.
WITH (fillfactor = 80);
-- Idempotency keys are scoped per account and environment; the index settles races.
CREATE UNIQUE INDEX transactions_idempotency_key ON transactions (account_id, environment, idempotency_key);
CREATE INDEX transactions_account_idx ON transactions (account_id, created_at DESC, id DESC);
-- One cancellation per original, whatever the races.
CREATE UNIQUE INDEX transactions_one_cancellation ON transactions (cancels_id) WHERE cancels_id IS NOT NULL;

-- Fiscal records are append-only: a correction is a new record.
CREATE TABLE fiscal_records (
  id              uuid PRIMARY KEY,
  transaction_id  uuid NOT NULL REFERENCES transactions (id),
  account_id      uuid NOT NULL,
  system          text NOT NULL,
  kind            text NOT NULL CHECK (kind IN ('record', 'cancellation')),
  chain_key       text NOT NULL,
  seq             bigint NOT NULL,
  previous_fingerprint text,
  fingerprint     text,
  fiscal_id       text,
  document_number text,                       -- the number the document was issued under (series + number)
  qr_data         text,
  content_type    text NOT NULL,
  body            text NOT NULL,
  placeholder     boolean NOT NULL,
  created_at      timestamptz NOT NULL
);
CREATE UNIQUE INDEX fiscal_records_chain_seq ON fiscal_records (chain_key, seq);   -- a chain never forks
CREATE UNIQUE INDEX fiscal_records_transaction ON fiscal_records (transaction_id);

-- The head of each chain: locked FOR UPDATE while a record is appended.
CREATE TABLE chain_heads (
  chain_key        text PRIMARY KEY,
  seq              bigint NOT NULL,
  last_fingerprint text,
  last_fiscal_id   text,
  last_issued_at   timestamptz,
  updated_at       timestamptz NOT NULL
);

-- The job queue. Workers claim with FOR UPDATE SKIP LOCKED; a job whose lease ran out
-- (its worker died) is claimed again. Times come from the application clock.
CREATE TABLE jobs (
  id             uuid PRIMARY KEY,
  kind           text NOT NULL,                 -- submit, deliver_webhook, translate, …
  account_id     uuid,
  -- Deferred: a create enqueues its job before it takes the chain lock (shorter lock hold).
  transaction_id uuid REFERENCES transactions (id) DEFERRABLE INITIALLY DEFERRED,
  payload        jsonb NOT NULL DEFAULT '{}'::jsonb,
  status         text NOT NULL CHECK (status IN ('pending', 'processing', 'completed', 'failed', 'dead')),
  attempt        integer NOT NULL DEFAULT 0,
  max_attempts   integer NOT NULL,
  run_at         timestamptz NOT NULL,          -- next_retry_at
  locked_by      text,
  locked_until   timestamptz,
  last_error     text,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL
) WITH (fillfactor = 80);
CREATE INDEX jobs_runnable_idx ON jobs (run_at) WHERE status IN ('pending', 'failed');
CREATE INDEX jobs_leased_idx ON jobs (locked_until) WHERE status = 'processing';
CREATE INDEX jobs_account_idx ON jobs (account_id, kind, created_at DESC);
CREATE INDEX jobs_transaction_idx ON jobs (transaction_id);
