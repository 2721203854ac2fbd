-- The embedded engine's telemetry outbox (src/engine/telemetry.ts): data points the engine
-- took while it could not reach the service, kept in its own store until a batch of them is
-- accepted (202) by POST /v1/agents/{agent_id}/telemetry. Bounded by the engine (oldest
-- dropped first); `engine_telemetry_dropped` counts what was dropped, reported in the log
-- and in queue_status. Only an engine writes these tables; the cloud service leaves them empty.
CREATE TABLE engine_telemetry (
  seq    bigserial PRIMARY KEY,
  point  jsonb NOT NULL
);

CREATE TABLE engine_telemetry_dropped (
  id       boolean PRIMARY KEY DEFAULT true CHECK (id),
  dropped  bigint NOT NULL
);
