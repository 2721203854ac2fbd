-- The metrics' queue gauges (store/repos/queue-metrics-repo.ts) count the dead jobs at every
-- scrape. Completed jobs stay in the table for good, so without an index that count is a scan
-- of every job ever run; the dead ones are few (the retry queue), and this index is as small.
CREATE INDEX jobs_dead_idx ON jobs (kind) WHERE status = 'dead';
