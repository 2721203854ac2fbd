-- Ordered queues: the submit jobs of a chained system's chain (VERI*FACTU, TicketBAI) must
-- reach the authority in chain order: AEAT refuses a record whose predecessor it has not
-- registered (the chain would break, error 1180), and a record may not overtake one that
-- is waiting for a retry. A job of an ordered queue (queue_key, queue_seq) is inserted
-- `waiting` while an earlier job of its queue is unfinished, and made `pending` when that
-- one completes or dies (jobs/queue.ts promoteNext). Claims stay a plain index scan.
ALTER TABLE jobs ADD COLUMN queue_key text, ADD COLUMN queue_seq bigint;
ALTER TABLE jobs DROP CONSTRAINT jobs_status_check;
ALTER TABLE jobs ADD CONSTRAINT jobs_status_check CHECK (status IN ('waiting', 'pending', 'processing', 'completed', 'failed', 'dead'));
CREATE INDEX jobs_queue_idx ON jobs (queue_key, queue_seq)
  WHERE queue_key IS NOT NULL AND status IN ('waiting', 'pending', 'failed', 'processing');
