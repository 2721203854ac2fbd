-- A fact with two names (fiscalization.completed ≡ transaction.fiscalized,
-- fiscalization.dead_letter ≡ transaction.failed) is delivered under both to a subscription
-- that asked for either (DECISIONS "Events and webhooks"): one delivery per event,
-- subscription and name.
DROP INDEX IF EXISTS webhook_deliveries_event_subscription;
CREATE UNIQUE INDEX webhook_deliveries_event_subscription_name ON webhook_deliveries (event_id, subscription_id, event_type);
