-- Long values of the rows every create writes (a SAF-T document's XML body, a large
-- request) are compressed with LZ4 rather than PostgreSQL's default pglz: a Portuguese
-- record body (~2.4 KB) is over the 2 KB toasting threshold, and pglz compressing it cost
-- ~13 % of the create rate on the benchmark (bench G: 2,293-2,381 req/s with pglz,
-- 2,638 with lz4, PostgreSQL CPU 0.21 -> 0.18 ms a create; storing it uncompressed was
-- in between: more WAL). Values already stored keep their compression; both read alike.
-- A server built without LZ4 (PGlite) keeps pglz.
DO $$
BEGIN
  ALTER TABLE fiscal_records ALTER COLUMN body SET COMPRESSION lz4;
  ALTER TABLE transactions ALTER COLUMN request_payload SET COMPRESSION lz4,
                           ALTER COLUMN normalized SET COMPRESSION lz4,
                           ALTER COLUMN response_payload SET COMPRESSION lz4,
                           ALTER COLUMN render_hints SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  RAISE NOTICE 'lz4 not available: long values stay compressed with pglz';
END
$$;
