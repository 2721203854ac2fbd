-- Ordered queues: the submit jobs of a chained system's chain (VERI*FACTU, TicketBAI) must
-- reach the authority in chain order: AEAT refuses a record whose predecessor it has not
-- registered (the chain would break, error 1180), and a record may not overtake one that
-- is waiting for a retry. A job with a queue_key runs only when no job of the same key
-- with a lower queue_seq is still pending, failed (waiting to retry) or processing.
ALTER TABLE jobs ADD COLUMN queue_key text, ADD COLUMN queue_seq bigint;
CREATE INDEX jobs_queue_idx ON jobs (queue_key, queue_seq)
  WHERE queue_key IS NOT NULL AND status IN ('pending', 'failed', 'processing');
