-- Documents we only store and read back whole (never search inside with jsonb operators)
-- become `json`: PostgreSQL keeps the text as sent after a syntax check, instead of
-- converting it to jsonb's binary form on every insert and update. That conversion was a
-- measurable part of the database's CPU per create (bench/results, transactions-profile).
-- `->`/`->>` still work on json; webhook_subscriptions.events stays jsonb (searched with ?|).
ALTER TABLE transactions
  ALTER COLUMN request_payload TYPE json USING request_payload::json,
  ALTER COLUMN normalized TYPE json USING normalized::json,
  ALTER COLUMN response_payload DROP DEFAULT,
  ALTER COLUMN response_payload TYPE json USING response_payload::json,
  ALTER COLUMN response_payload SET DEFAULT '{}'::json,
  ALTER COLUMN render_hints DROP DEFAULT,
  ALTER COLUMN render_hints TYPE json USING render_hints::json,
  ALTER COLUMN render_hints SET DEFAULT '[]'::json;

ALTER TABLE events ALTER COLUMN data TYPE json USING data::json;
ALTER TABLE webhook_deliveries ALTER COLUMN payload TYPE json USING payload::json;
ALTER TABLE jobs
  ALTER COLUMN payload DROP DEFAULT,
  ALTER COLUMN payload TYPE json USING payload::json,
  ALTER COLUMN payload SET DEFAULT '{}'::json;
