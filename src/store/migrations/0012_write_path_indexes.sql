-- Indexes nothing reads, paid on every write of the hottest tables (bench/results: the
-- queue drain and the create are PostgreSQL-bound):
-- * jobs_transaction_idx: no query looks jobs up by transaction; every job update
--   (claim, finish, promotion: not HOT, status is in partial index predicates) added an
--   entry to it.
-- * events_account_idx: events are written with each completed transaction and read by
--   no API (deliveries carry their own payload); a future events endpoint brings its index.
DROP INDEX IF EXISTS jobs_transaction_idx;
DROP INDEX IF EXISTS events_account_idx;
