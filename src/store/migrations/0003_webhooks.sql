-- Webhooks: subscriptions, the events the service announces, and the delivery log.
-- Times are timestamptz written by the application clock.

CREATE TABLE webhook_subscriptions (
  id          uuid PRIMARY KEY,
  account_id  uuid NOT NULL REFERENCES accounts (id),
  url         text NOT NULL,
  -- The signing secret, sealed with MASTER_KEY (AES-256-GCM, AAD `webhook:<id>:secret`):
  -- never in clear at rest; unsealed only to sign a delivery.
  secret      text NOT NULL,
  events      jsonb NOT NULL,               -- array of event type names
  description text,
  enabled     boolean NOT NULL DEFAULT true,
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL,
  deleted_at  timestamptz
);
CREATE INDEX webhook_subscriptions_account_idx ON webhook_subscriptions (account_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;

-- Every event announced, whether or not a subscription wanted it.
CREATE TABLE events (
  id          uuid PRIMARY KEY,
  account_id  uuid NOT NULL REFERENCES accounts (id),
  type        text NOT NULL,
  data        jsonb NOT NULL,
  created_at  timestamptz NOT NULL
);
CREATE INDEX events_account_idx ON events (account_id, created_at DESC, id DESC);

-- One delivery per (event, subscription): its current state is the last attempt's.
CREATE TABLE webhook_deliveries (
  id              uuid PRIMARY KEY,
  subscription_id uuid NOT NULL REFERENCES webhook_subscriptions (id),
  account_id      uuid NOT NULL,
  event_id        uuid NOT NULL REFERENCES events (id),
  event_type      text NOT NULL,            -- the name delivered: the one the subscription asked for
  payload         jsonb NOT NULL,           -- the body sent (the same on every attempt)
  job_id          uuid,                     -- the deliver_webhook job
  status          text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'dead', 'cancelled')),
  attempt         integer NOT NULL DEFAULT 0,
  max_attempts    integer NOT NULL,
  response_status integer,
  response_body   text,                     -- first 1 KiB of the last answer
  error           text,
  duration_ms     integer,
  next_attempt_at timestamptz,
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL,
  delivered_at    timestamptz
);
CREATE UNIQUE INDEX webhook_deliveries_event_subscription ON webhook_deliveries (event_id, subscription_id);
CREATE INDEX webhook_deliveries_subscription_idx ON webhook_deliveries (subscription_id, created_at DESC, id DESC);

-- Every attempt of a delivery, append-only.
CREATE TABLE webhook_delivery_attempts (
  delivery_id     uuid NOT NULL REFERENCES webhook_deliveries (id),
  attempt         integer NOT NULL,
  outcome         text NOT NULL CHECK (outcome IN ('succeeded', 'failed')),
  response_status integer,
  response_body   text,
  error           text,
  duration_ms     integer NOT NULL,
  attempted_at    timestamptz NOT NULL,     -- the signed timestamp's moment
  PRIMARY KEY (delivery_id, attempt)
);
