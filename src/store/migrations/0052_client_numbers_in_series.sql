-- A number a request chose and the series counter never give one number twice
-- (docs/decisions.md "A client number and the series counter", FiscalSystem.issuedDocument
-- `counter`):
-- - chain_documents.numbering_key / number: where the counter of a series would write the
--   document a request chose ('issued' rows whose number is in the counter's form);
-- - number_series.client_max: the highest such number registered in the series (NULL:
--   none). While it is above last_number, the counter skips the registered numbers it
--   reaches; a series without one pays nothing (the counter's statements read the column
--   of the row they move anyway);
-- - number_series.counted_from: numbers above it that the counter reached are its own, and
--   a request naming one is refused. Up to it they predate this migration, when a sale
--   whose request named its number took a number from the counter too (unused): whether
--   the counter wrote one of those is not known, so a request may still name them.
ALTER TABLE chain_documents ADD COLUMN numbering_key text;
ALTER TABLE chain_documents ADD COLUMN number bigint;
CREATE INDEX chain_documents_numbers ON chain_documents (numbering_key, number) WHERE numbering_key IS NOT NULL;
ALTER TABLE number_series ADD COLUMN client_max bigint;
ALTER TABLE number_series ADD COLUMN counted_from bigint NOT NULL DEFAULT 0;
UPDATE number_series SET counted_from = last_number;

-- The numbers already registered (migration 0049 on), placed in their series as the
-- plug-ins place them (src/countries/es-verifactu/index.ts, es-ticketbai/index.ts), a
-- one-time backfill: the series key is the chain key (the issuer's, `:live` last on live
-- keys) with the series before the environment.
--   VERI*FACTU: document `<series>-<number>` (NumSerieFactura), split at its last dash;
--   TicketBAI:  document `<series> <number>` (SerieFactura, NumFactura).
WITH placed AS (
  SELECT d.chain_key, d.role, d.document, d.transaction_id,
         CASE WHEN d.chain_key LIKE 'es-verifactu:%' THEN substring(d.document FROM '^(.*)-[1-9][0-9]{0,14}$')
              ELSE split_part(d.document, ' ', 1) END AS series,
         CASE WHEN d.chain_key LIKE 'es-verifactu:%' THEN substring(d.document FROM '-([1-9][0-9]{0,14})$')
              ELSE substring(d.document FROM '^[^ ]+ ([1-9][0-9]{0,14})$') END AS number
    FROM chain_documents d
   WHERE d.role = 'issued' AND (d.chain_key LIKE 'es-verifactu:%' OR d.chain_key LIKE 'es-ticketbai:%')
), keyed AS (
  SELECT p.*, CASE WHEN p.chain_key LIKE '%:live' THEN left(p.chain_key, -5) || ':' || p.series || ':live'
                   ELSE p.chain_key || ':' || p.series END AS numbering_key
    FROM placed p
   WHERE p.number IS NOT NULL AND p.series ~ '^[A-Za-z0-9._/-]{1,20}$'
)
UPDATE chain_documents d SET numbering_key = k.numbering_key, number = k.number::bigint
  FROM keyed k
 WHERE d.chain_key = k.chain_key AND d.role = k.role AND d.document = k.document AND d.transaction_id = k.transaction_id;

INSERT INTO number_series (numbering_key, last_number, updated_at, client_max)
SELECT numbering_key, 0, now(), max(number) FROM chain_documents WHERE numbering_key IS NOT NULL GROUP BY numbering_key
ON CONFLICT (numbering_key) DO UPDATE SET client_max = EXCLUDED.client_max;
