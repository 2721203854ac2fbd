-- Subscriptions (spec "Subscription" resource; DECISIONS "Accounts, consents, subscriptions").
--
-- One subscription per account (the unique account_id is what makes a second POST a 409,
-- even under concurrent POSTs). The period is anchored at created_at and rolls by calendar
-- months or years; period_start/period_end are the current one, advanced when a PATCH finds
-- it elapsed, so proration always uses the period the change falls in.
CREATE TABLE subscriptions (
  id text PRIMARY KEY,
  account_id uuid NOT NULL UNIQUE REFERENCES accounts(id),
  company_name text NOT NULL,
  billing_email text NOT NULL,
  payment_method_id text NOT NULL,
  billing_customer_id text NOT NULL,
  billing_subscription_id text NOT NULL,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  merchant_count integer NOT NULL CHECK (merchant_count >= 1),
  billing_interval text NOT NULL CHECK (billing_interval IN ('month', 'year')),
  current_tier text NOT NULL CHECK (current_tier IN ('starter', 'growth', 'scale', 'enterprise')),
  monthly_amount bigint NOT NULL,
  period_start timestamptz NOT NULL,
  period_end timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX subscriptions_billing_customer_idx ON subscriptions (billing_customer_id);

-- The billing ledger: what the account was charged (or credited), one line per event, never
-- updated. It is money owed, not a fiscal record: it has nothing to do with the chained
-- fiscal ledger (fiscal_records), and nothing here is signed or chained.
CREATE TABLE billing_ledger (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id),
  subscription_id text NOT NULL REFERENCES subscriptions(id),
  kind text NOT NULL CHECK (kind IN ('period_charge', 'proration')),
  description text NOT NULL,
  amount bigint NOT NULL,
  currency text NOT NULL DEFAULT 'EUR',
  from_merchant_count integer,
  to_merchant_count integer NOT NULL,
  period_start timestamptz NOT NULL,
  period_end timestamptz NOT NULL,
  remaining_seconds bigint,
  period_seconds bigint NOT NULL,
  provider_ref text,
  created_at timestamptz NOT NULL
);
CREATE INDEX billing_ledger_account_idx ON billing_ledger (account_id, created_at);

-- The rate limiter caches an account's tier (services/account-tiers.ts): every node must
-- hear when a subscription appears or its merchant count changes (store/change-feed.ts).
-- Keyed by account id, and fired on INSERT too: a node may have cached "no subscription".
CREATE FUNCTION svc_notify_subscription_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('svc_changes', 'subscriptions:' || OLD.account_id::text);
  ELSE
    PERFORM pg_notify('svc_changes', 'subscriptions:' || NEW.account_id::text);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER subscriptions_changed
  AFTER INSERT OR UPDATE OR DELETE ON subscriptions
  FOR EACH ROW EXECUTE FUNCTION svc_notify_subscription_change();
