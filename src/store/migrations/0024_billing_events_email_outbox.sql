-- Billing receiver (POST /v1/webhooks/stripe) and notification e-mail.
--
-- billing_events: one row per provider event id, written in the same transaction as the
-- event's effect (account suspended or restored, e-mail queued): the primary key makes a
-- duplicate delivery, even one racing the first, a no-op (spec: "each event id is
-- processed once").
CREATE TABLE billing_events (
  event_id     text PRIMARY KEY,
  type         text NOT NULL,
  account_id   uuid REFERENCES accounts (id),
  outcome      text NOT NULL,               -- suspended, restored, unchanged, logged, ignored
  received_at  timestamptz NOT NULL
);
CREATE INDEX billing_events_account_idx ON billing_events (account_id, received_at DESC);

-- email_outbox: every notification e-mail is written here first (in the transaction that
-- decided to send it), then sent over SMTP_URL. Without SMTP it waits; a failed send is
-- retried with backoff: a message is never lost. claimed_until keeps two nodes from
-- sending the same row at once.
CREATE TABLE email_outbox (
  id              uuid PRIMARY KEY,
  account_id      uuid REFERENCES accounts (id),
  to_address      text NOT NULL,
  subject         text NOT NULL,
  body_text       text NOT NULL,
  created_at      timestamptz NOT NULL,
  next_attempt_at timestamptz NOT NULL,
  claimed_until   timestamptz,
  attempts        integer NOT NULL DEFAULT 0,
  last_error      text,
  sent_at         timestamptz
);
CREATE INDEX email_outbox_due_idx ON email_outbox (next_attempt_at) WHERE sent_at IS NULL;
