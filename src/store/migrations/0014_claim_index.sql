-- The claim walks the due jobs in (run_at, id) order (jobs/queue.ts `claim`): with the id in
-- the index the walk needs no sort, and stops after the batch it takes.
DROP INDEX IF EXISTS jobs_runnable_idx;
CREATE INDEX jobs_runnable_idx ON jobs (run_at, id) WHERE status IN ('pending', 'failed');
