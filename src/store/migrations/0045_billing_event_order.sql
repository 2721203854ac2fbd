-- Billing events arrive in any order (a provider retries deliveries for days): the time of
-- the latest event that changed the account's billing state (the provider's `created`, or
-- our clock for a renewal), so an older event that arrives later changes nothing
-- (billing/receiver.ts). NULL: no such event yet.
ALTER TABLE accounts ADD COLUMN billing_event_at timestamptz;
