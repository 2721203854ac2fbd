-- Platform: accounts, consents, API keys, locations, server secrets check.
-- Times are timestamptz written by the application clock (so tests can drive time).

CREATE TABLE accounts (
  id            uuid PRIMARY KEY,
  name          text NOT NULL,
  billing_email text NOT NULL,
  status        text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended', 'cancelled')),
  status_reason text,
  status_since  timestamptz NOT NULL,
  created_at    timestamptz NOT NULL,
  updated_at    timestamptz NOT NULL
);
-- Billing e-mail is unique across accounts, case-insensitively; the index settles races.
CREATE UNIQUE INDEX accounts_billing_email_key ON accounts (lower(billing_email));

CREATE TABLE consents (
  id          uuid PRIMARY KEY,
  account_id  uuid NOT NULL REFERENCES accounts (id),
  type        text NOT NULL CHECK (type IN ('terms', 'privacy_policy', 'marketing', 'data_processing')),
  version     text NOT NULL,
  granted_at  timestamptz NOT NULL,
  revoked_at  timestamptz
);
CREATE INDEX consents_account_idx ON consents (account_id, granted_at DESC);

CREATE TABLE api_keys (
  id           uuid PRIMARY KEY,
  account_id   uuid NOT NULL REFERENCES accounts (id),
  name         text NOT NULL,
  environment  text NOT NULL CHECK (environment IN ('test', 'live')),
  key_prefix   text NOT NULL,            -- 'svc_test_' or 'svc_live_'
  lookup       text NOT NULL,            -- first 8 characters of the random part: finds the row, proves nothing
  key_hash     bytea NOT NULL,           -- HMAC-SHA256 of the whole key under a server secret
  key_last4    text NOT NULL,            -- shown in lists to tell keys apart
  permissions  jsonb,                    -- NULL = root key; else the list of granted permissions
  created_at   timestamptz NOT NULL,
  last_used_at timestamptz,
  revoked_at   timestamptz,
  rotated_to   uuid
);
CREATE INDEX api_keys_lookup_idx ON api_keys (lookup);
CREATE INDEX api_keys_account_idx ON api_keys (account_id, created_at DESC);

CREATE TABLE locations (
  id             uuid PRIMARY KEY,
  account_id     uuid NOT NULL REFERENCES accounts (id),
  name           text NOT NULL,
  country        text NOT NULL,
  system         text,                   -- fiscal system key chosen from country + country_config
  address        text,
  tax_id         text,
  country_config jsonb NOT NULL DEFAULT '{}'::jsonb,  -- secret fields sealed with MASTER_KEY
  status         text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive')),
  cert_expiry    timestamptz,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL,
  deleted_at     timestamptz
);
CREATE INDEX locations_account_idx ON locations (account_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;

-- One row: a keyed check value of MASTER_KEY, so a node started with another key
-- refuses to start instead of failing every API key and sealed secret.
CREATE TABLE server_secrets (
  name       text PRIMARY KEY,
  check_value text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
