-- An original's cancelled_by_id names the cancellation that stands (docs/decisions.md "The
-- cancellation that stands"): its latest cancellation not refused, else NULL. The service
-- keeps it so in the transaction that refuses (or, SdI, un-refuses) a cancellation
-- (services/cancellation.ts `relinkOriginal`); before, the column kept the latest issued
-- and the API hid a refused one when it read it.
-- Existing rows: the statuses the status machine declared refused when this migration was
-- written (core/status.ts `refused`: the core's, SdI's and myDATA's; a one-time backfill,
-- as 0018's). Rerunnable: a second run finds nothing to change. updated_at is left alone:
-- what the API showed does not change, except for the rare original a refused later
-- cancellation hid while an earlier one stood.
UPDATE transactions o
   SET cancelled_by_id = (
         SELECT c.id FROM transactions c
          WHERE c.cancels_id = o.id
            AND c.status NOT IN ('failed_permanent', 'rejected', 'failed_offline_grace_expired')
          ORDER BY c.created_at DESC, c.id DESC
          LIMIT 1)
 WHERE o.cancelled_by_id IS NOT NULL
   AND EXISTS (
         SELECT 1 FROM transactions l
          WHERE l.id = o.cancelled_by_id
            AND l.status IN ('failed_permanent', 'rejected', 'failed_offline_grace_expired'));
