-- The numbers issued before the register (migration 0049) registered (docs/decisions.md
-- "Issued numbers stored before migration 0049 are registered"): a transaction stored
-- before it had no `issued` row, so its client-chosen number could be issued again
-- without the 409, and a refund naming it was not matched (Italy: a TD07's refund stayed
-- TD04). A one-time backfill: each transaction (a record: not a cancellation) of a system
-- whose plug-in names the number its request chose (FiscalSystem.issuedDocument) gets the
-- row that plug-in gives it today, from its stored draft (`normalized`, what the append
-- passed it) and its location as it is now, as services/transaction-entry.ts
-- `onceDocumentsOf` / `onceInScope` write it:
--   chain_key   the plug-in's `scope`, else the record's chain (its `chainKey`), `:live`
--               last on live keys (shared/chain-key.ts `inEnvironment`);
--   document, alias, numbering_key / number (the plug-in's `counter`, per environment as
--               well), created_at the transaction's; the series' client_max raised to
--               the numbers placed (chain-documents-repo `insert`).
-- A transaction with an `issued` row already is left as it is. One refused by its
-- authority gets its row too: it never stands (chain-documents-repo `standing`, and the
-- refund lookup, read the transaction's status), as the row it registered when created.
-- Mirrored below, per plug-in (the mirror is tested in test/api/issued-backfill.test.ts):
--   metaString(tx, f) (shared/metadata-fields.ts): a non-empty string, or a number's text;
--   configString(config, f) (shared/config-fields.ts): a non-empty string.

-- VERI*FACTU (es-verifactu/index.ts): document `<series>-<invoice_number>` (NumSerieFactura;
-- the series `A` when none), in the issuer's chain `es-verifactu:<account>:<tax_id or
-- location id>`; in a counter's form (the part after the last dash 1-15 digits without a
-- leading zero, the part before it a series) placed in that series' counter.
WITH src AS (
  SELECT t.id, t.created_at, CASE WHEN t.environment = 'live' THEN ':live' ELSE '' END AS env,
         'es-verifactu:' || l.account_id::text || ':' || COALESCE(l.tax_id, l.id::text) AS issuer,
         COALESCE(CASE json_typeof(t.normalized -> 'metadata' -> 'series')
                    WHEN 'string' THEN NULLIF(t.normalized -> 'metadata' ->> 'series', '')
                    WHEN 'number' THEN t.normalized -> 'metadata' ->> 'series' END, 'A') AS series,
         CASE json_typeof(t.normalized -> 'metadata' -> 'invoice_number')
           WHEN 'string' THEN NULLIF(t.normalized -> 'metadata' ->> 'invoice_number', '')
           WHEN 'number' THEN t.normalized -> 'metadata' ->> 'invoice_number' END AS number
    FROM transactions t JOIN locations l ON l.id = t.location_id
   WHERE t.system = 'es-verifactu' AND t.type <> 'cancellation'
     AND NOT EXISTS (SELECT 1 FROM chain_documents d WHERE d.transaction_id = t.id AND d.role = 'issued')
), doc AS (
  SELECT s.*, s.series || '-' || s.number AS document FROM src s WHERE s.number IS NOT NULL
), placed AS (
  SELECT d.*, substring(d.document FROM '^(.*)-[^-]*$') AS counter_series, substring(d.document FROM '-([^-]*)$') AS counter_number FROM doc d
), added AS (
  INSERT INTO chain_documents (chain_key, role, document, transaction_id, created_at, numbering_key, number)
  SELECT p.issuer || p.env, 'issued', p.document, p.id, p.created_at,
         CASE WHEN p.counter_number ~ '^[1-9][0-9]{0,14}$' AND p.counter_series ~ '^[A-Za-z0-9._/-]{1,20}$'
              THEN p.issuer || ':' || p.counter_series || p.env END,
         CASE WHEN p.counter_number ~ '^[1-9][0-9]{0,14}$' AND p.counter_series ~ '^[A-Za-z0-9._/-]{1,20}$'
              THEN p.counter_number::bigint END
    FROM placed p
  ON CONFLICT DO NOTHING
  RETURNING numbering_key, number
)
INSERT INTO number_series (numbering_key, last_number, updated_at, client_max)
SELECT numbering_key, 0, now(), max(number) FROM added WHERE numbering_key IS NOT NULL GROUP BY numbering_key
ON CONFLICT (numbering_key) DO UPDATE SET client_max = GREATEST(number_series.client_max, EXCLUDED.client_max);

-- TicketBAI (es-ticketbai/index.ts, metadata.ts): document `<series> <invoice_number>`
-- (SerieFactura, NumFactura; the series the metadata's, else the location's config
-- `series`, else `A`), in the issuer's chain per territory `es-ticketbai:<account>:<tax_id
-- or location id>:<territory>`; a number of 1-15 digits without a leading zero placed in
-- the series' counter `<that chain>:<series>`.
WITH src AS (
  SELECT t.id, t.created_at, CASE WHEN t.environment = 'live' THEN ':live' ELSE '' END AS env,
         'es-ticketbai:' || l.account_id::text || ':' || COALESCE(l.tax_id, l.id::text) || ':'
           || COALESCE(l.country_config ->> 'territory', 'undefined') AS issuer,
         COALESCE(CASE json_typeof(t.normalized -> 'metadata' -> 'series')
                    WHEN 'string' THEN NULLIF(t.normalized -> 'metadata' ->> 'series', '')
                    WHEN 'number' THEN t.normalized -> 'metadata' ->> 'series' END,
                  CASE WHEN jsonb_typeof(l.country_config -> 'series') = 'string' THEN NULLIF(l.country_config ->> 'series', '') END,
                  'A') AS series,
         CASE json_typeof(t.normalized -> 'metadata' -> 'invoice_number')
           WHEN 'string' THEN NULLIF(t.normalized -> 'metadata' ->> 'invoice_number', '')
           WHEN 'number' THEN t.normalized -> 'metadata' ->> 'invoice_number' END AS number
    FROM transactions t JOIN locations l ON l.id = t.location_id
   WHERE t.system = 'es-ticketbai' AND t.type <> 'cancellation'
     AND NOT EXISTS (SELECT 1 FROM chain_documents d WHERE d.transaction_id = t.id AND d.role = 'issued')
), added AS (
  INSERT INTO chain_documents (chain_key, role, document, transaction_id, created_at, numbering_key, number)
  SELECT s.issuer || s.env, 'issued', s.series || ' ' || s.number, s.id, s.created_at,
         CASE WHEN s.number ~ '^[1-9][0-9]{0,14}$' THEN s.issuer || ':' || s.series || s.env END,
         CASE WHEN s.number ~ '^[1-9][0-9]{0,14}$' THEN s.number::bigint END
    FROM src s
   WHERE s.number IS NOT NULL
  ON CONFLICT DO NOTHING
  RETURNING numbering_key, number
)
INSERT INTO number_series (numbering_key, last_number, updated_at, client_max)
SELECT numbering_key, 0, now(), max(number) FROM added WHERE numbering_key IS NOT NULL GROUP BY numbering_key
ON CONFLICT (numbering_key) DO UPDATE SET client_max = GREATEST(number_series.client_max, EXCLUDED.client_max);

-- SII (es-sii/index.ts): document `<series><invoice_number>` (NumSerieFacturaEmisor; no
-- series: the number alone), in the issuer's scope `es-sii:<account>:<tax_id or location id>`.
INSERT INTO chain_documents (chain_key, role, document, transaction_id, created_at)
SELECT 'es-sii:' || l.account_id::text || ':' || COALESCE(l.tax_id, l.id::text) || CASE WHEN t.environment = 'live' THEN ':live' ELSE '' END,
       'issued', COALESCE(m.series, '') || m.number, t.id, t.created_at
  FROM transactions t
  JOIN locations l ON l.id = t.location_id
  CROSS JOIN LATERAL (
    SELECT CASE json_typeof(t.normalized -> 'metadata' -> 'series')
             WHEN 'string' THEN NULLIF(t.normalized -> 'metadata' ->> 'series', '')
             WHEN 'number' THEN t.normalized -> 'metadata' ->> 'series' END AS series,
           CASE json_typeof(t.normalized -> 'metadata' -> 'invoice_number')
             WHEN 'string' THEN NULLIF(t.normalized -> 'metadata' ->> 'invoice_number', '')
             WHEN 'number' THEN t.normalized -> 'metadata' ->> 'invoice_number' END AS number
  ) m
 WHERE t.system = 'es-sii' AND t.type <> 'cancellation' AND m.number IS NOT NULL
   AND NOT EXISTS (SELECT 1 FROM chain_documents d WHERE d.transaction_id = t.id AND d.role = 'issued')
ON CONFLICT DO NOTHING;

-- SdI (it-sdi/metadata.ts `sdiIssuedDocument`): when the metadata's invoice_number and
-- invoice_date are strings, document `<TipoDocumento> <year of invoice_date> <invoice_number>`
-- (the metadata's tipo_documento when a string, else TD01 for a sale, TD04 otherwise), alias
-- the invoice_number, in the issuer's scope `it-sdi:<account>:<partita IVA>` (the config's
-- partita_iva, else tax_id, else the location id: `issuerScope`).
INSERT INTO chain_documents (chain_key, role, document, transaction_id, created_at, alias)
SELECT 'it-sdi:' || l.account_id::text || ':'
         || COALESCE(CASE WHEN jsonb_typeof(l.country_config -> 'partita_iva') = 'string' THEN NULLIF(l.country_config ->> 'partita_iva', '') END,
                     l.tax_id, l.id::text)
         || CASE WHEN t.environment = 'live' THEN ':live' ELSE '' END,
       'issued',
       CASE WHEN json_typeof(t.normalized -> 'metadata' -> 'tipo_documento') = 'string' THEN t.normalized -> 'metadata' ->> 'tipo_documento'
            WHEN t.normalized ->> 'type' = 'sale' THEN 'TD01' ELSE 'TD04' END
         || ' ' || left(t.normalized -> 'metadata' ->> 'invoice_date', 4) || ' ' || (t.normalized -> 'metadata' ->> 'invoice_number'),
       t.id, t.created_at, t.normalized -> 'metadata' ->> 'invoice_number'
  FROM transactions t
  JOIN locations l ON l.id = t.location_id
 WHERE t.system = 'it-sdi' AND t.type <> 'cancellation'
   AND json_typeof(t.normalized -> 'metadata' -> 'invoice_number') = 'string'
   AND json_typeof(t.normalized -> 'metadata' -> 'invoice_date') = 'string'
   AND NOT EXISTS (SELECT 1 FROM chain_documents d WHERE d.transaction_id = t.id AND d.role = 'issued')
ON CONFLICT DO NOTHING;
