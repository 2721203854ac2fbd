-- Greece: a document's number (series + aa) belongs to the issuer's (AFM, branch, series),
-- not to a location (spec: default_series "unique per (afm, year, branch)"; AADE's UID is
-- computed from AFM, date, branch, type, series and aa). Chains were keyed per location,
-- so two locations of one AFM and branch with one series both issued A-1, A-2… The key
-- is now gr-mydata:<account>:<afm>:<branch>:<series>[:live] (countries/gr-mydata/index.ts).
--
-- Existing chains are renamed, records and head alike, where one location's chain maps
-- to the new key alone. Where several did (numbers already issued twice), their records
-- keep their old keys and the new key starts from the furthest of their heads, so no
-- number is issued a third time.
CREATE TEMPORARY TABLE gr_chain_moves ON COMMIT DROP AS
  SELECT h.chain_key AS old_key,
         'gr-mydata:' || l.account_id || ':' || (l.country_config->>'afm') || ':' || (l.country_config->>'branch') || ':' || substr(h.chain_key, 48) AS new_key,
         h.seq
    FROM chain_heads h
    JOIN locations l ON l.id::text = substr(h.chain_key, 11, 36)
   WHERE h.chain_key LIKE 'gr-mydata:%'
     AND substr(h.chain_key, 47, 1) = ':'
     AND l.country_config ? 'afm' AND l.country_config ? 'branch';

-- One chain per new key: rename it.
UPDATE fiscal_records f SET chain_key = m.new_key
  FROM gr_chain_moves m
 WHERE f.chain_key = m.old_key
   AND (SELECT count(*) FROM gr_chain_moves o WHERE o.new_key = m.new_key) = 1;
UPDATE chain_heads h SET chain_key = m.new_key
  FROM gr_chain_moves m
 WHERE h.chain_key = m.old_key
   AND (SELECT count(*) FROM gr_chain_moves o WHERE o.new_key = m.new_key) = 1;

-- Several: a new head copied from the furthest of them.
INSERT INTO chain_heads (chain_key, seq, last_fingerprint, last_fiscal_id, last_issued_at, updated_at, last_link)
SELECT DISTINCT ON (m.new_key) m.new_key, h.seq, h.last_fingerprint, h.last_fiscal_id, h.last_issued_at, h.updated_at, h.last_link
  FROM gr_chain_moves m JOIN chain_heads h ON h.chain_key = m.old_key
 WHERE (SELECT count(*) FROM gr_chain_moves o WHERE o.new_key = m.new_key) > 1
 ORDER BY m.new_key, h.seq DESC, h.last_issued_at DESC NULLS LAST
ON CONFLICT (chain_key) DO NOTHING;
