-- Certificate expiry notices (certificate.expiring 30 days before, certificate.expired),
-- sent once each, by a daily scheduled job.
ALTER TABLE certificates ADD COLUMN expiring_notified_at timestamptz;
ALTER TABLE certificates ADD COLUMN expired_notified_at timestamptz;

-- A scheduled job (kind `scheduled:…`) has at most one live instance, however many
-- nodes start and schedule it: each run enqueues the next one.
CREATE UNIQUE INDEX jobs_scheduled_singleton ON jobs (kind)
  WHERE status IN ('pending', 'failed', 'processing') AND kind LIKE 'scheduled:%';
