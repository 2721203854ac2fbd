-- Fleet telemetry (POST /v1/agents/{agent_id}/telemetry, GET /v1/fleet/metrics).
-- Stored in three shapes so the metrics read stays fast over 30 days of 1,000 agents:
--   fleet_points   every accepted data point, as sent (short ranges read these);
--   fleet_hourly   per agent and hour, the sums of the counters (the agent's own baseline
--                  for anomaly detection);
--   fleet_account_hourly  the same summed over the account's agents (long ranges read these);
--   fleet_agents   per agent, the latest gauges (queue, storage, adapter versions): the
--                  "now" of the fleet, and the previous state anomaly detection compares to.
-- Keyed by account and environment: a test key's agents never mix with live ones.
CREATE TABLE fleet_points (
  account_id           uuid NOT NULL REFERENCES accounts (id),
  environment          text NOT NULL CHECK (environment IN ('test', 'live')),
  agent_id             text NOT NULL,
  ts                   timestamptz NOT NULL,
  transactions_total   bigint NOT NULL,
  transactions_failed  bigint NOT NULL,
  queue_pending        bigint NOT NULL,
  queue_dead           bigint NOT NULL,
  storage_used_bytes   bigint NOT NULL,
  storage_total_bytes  bigint NOT NULL,
  adapter_versions     jsonb NOT NULL,
  received_at          timestamptz NOT NULL,
  -- An engine that resends a batch (its answer was lost) adds nothing twice.
  PRIMARY KEY (account_id, environment, agent_id, ts)
);
CREATE INDEX fleet_points_time_idx ON fleet_points (account_id, environment, ts);

CREATE TABLE fleet_hourly (
  account_id           uuid NOT NULL REFERENCES accounts (id),
  environment          text NOT NULL,
  hour                 timestamptz NOT NULL,
  agent_id             text NOT NULL,
  points               bigint NOT NULL,
  transactions_total   bigint NOT NULL,
  transactions_failed  bigint NOT NULL,
  PRIMARY KEY (account_id, environment, hour, agent_id)
);
-- The agent's own baseline (anomaly detection): its hours, newest first.
CREATE INDEX fleet_hourly_agent_idx ON fleet_hourly (account_id, environment, agent_id, hour);

-- Per account and hour, the sums over its agents: what 6h, 24h, 7d and 30d read (720 rows
-- for 30 days, whatever the fleet's size; bench/fleet.ts measured 2 s for the same series
-- summed from fleet_hourly over 1,000 agents). `agents`: how many agents reported in the hour.
CREATE TABLE fleet_account_hourly (
  account_id           uuid NOT NULL REFERENCES accounts (id),
  environment          text NOT NULL,
  hour                 timestamptz NOT NULL,
  points               bigint NOT NULL,
  transactions_total   bigint NOT NULL,
  transactions_failed  bigint NOT NULL,
  agents               integer NOT NULL,
  PRIMARY KEY (account_id, environment, hour)
);

CREATE TABLE fleet_agents (
  account_id           uuid NOT NULL REFERENCES accounts (id),
  environment          text NOT NULL,
  agent_id             text NOT NULL,
  first_seen_at        timestamptz NOT NULL,
  last_seen_at         timestamptz NOT NULL,   -- the newest data point's timestamp
  queue_pending        bigint NOT NULL,
  queue_dead           bigint NOT NULL,
  storage_used_bytes   bigint NOT NULL,
  storage_total_bytes  bigint NOT NULL,
  adapter_versions     jsonb NOT NULL,
  PRIMARY KEY (account_id, environment, agent_id)
);
-- Active agents of a range: those whose newest point is in it.
CREATE INDEX fleet_agents_seen_idx ON fleet_agents (account_id, environment, last_seen_at);

-- Anomalies found when a batch is accepted (fleet/anomalies.ts).
CREATE TABLE fleet_alerts (
  id           uuid PRIMARY KEY,
  account_id   uuid NOT NULL REFERENCES accounts (id),
  environment  text NOT NULL,
  agent_id     text NOT NULL,
  type         text NOT NULL CHECK (type IN ('error_rate_spike', 'dead_queue_entries', 'storage_high', 'deadline')),
  message      text NOT NULL,
  value        double precision,
  threshold    double precision,
  observed_at  timestamptz NOT NULL,   -- the data point that showed it
  created_at   timestamptz NOT NULL
);
CREATE INDEX fleet_alerts_time_idx ON fleet_alerts (account_id, environment, observed_at);
