-- Whose data point each kept telemetry point is (src/engine/telemetry.ts): account,
-- environment and agent of the engine session that took it. A data_dir may serve a sandbox
-- session and later a production one (or another agent id): a session sends only its own
-- points, with its own key, so the test and live fleets stay apart. Points kept before this
-- column (NULL) are sent by the next session, as they were.
ALTER TABLE engine_telemetry ADD COLUMN owner text;
CREATE INDEX engine_telemetry_owner_idx ON engine_telemetry (owner, seq);
