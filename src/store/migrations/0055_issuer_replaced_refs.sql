-- Spain F3 (docs/decisions.md "Spain F3: refund and F3 exclude each other across the
-- issuer's locations"): the references a replacement and a correction name a ticket by
-- (chain_documents roles `replaced_ref`, `corrected_ref`; SaleReplacement.scope) are keyed in
-- the issuer's scope, `replaced:<issuer>` (`:live` last on live keys), where <issuer> is
--   es-verifactu:<account>:<tax_id or location id>            (es-verifactu/index.ts issuerOf)
--   es-sii:<account>:<tax_id or location id>                  (es-sii/index.ts issuerOf)
--   es-ticketbai:<account>:<tax_id or location id>:<territory> (es-ticketbai/metadata.ts issuerTerritoryOf)
-- They were keyed by the F3's location, `replaced:<location id>`: moved.
UPDATE chain_documents d
   SET chain_key = 'replaced:' || t.system || ':' || l.account_id::text || ':' || COALESCE(l.tax_id, l.id::text)
                   || CASE WHEN t.system = 'es-ticketbai' THEN ':' || COALESCE(l.country_config ->> 'territory', 'undefined') ELSE '' END
                   || CASE WHEN t.environment = 'live' THEN ':live' ELSE '' END
  FROM transactions t JOIN locations l ON l.id = t.location_id
 WHERE d.transaction_id = t.id AND d.role = 'replaced_ref'
   AND t.system IN ('es-verifactu', 'es-sii', 'es-ticketbai')
   AND d.chain_key IN ('replaced:' || l.id::text, 'replaced:' || l.id::text || ':live');

-- A refund or void stored before this registered nothing: each naming an invoice by number
-- and date (metadata original_invoice_number, original_issue_date) registers that reference
-- now (es/replacement.ts refOf: the JSON array of both, trimmed), so an F3 of a ticket
-- refunded before the upgrade is refused as one refunded after. Whether each still stands
-- (refused, cancelled) is read from its status when an F3 looks it up.
INSERT INTO chain_documents (chain_key, role, document, transaction_id, created_at)
SELECT 'replaced:' || t.system || ':' || l.account_id::text || ':' || COALESCE(l.tax_id, l.id::text)
         || CASE WHEN t.system = 'es-ticketbai' THEN ':' || COALESCE(l.country_config ->> 'territory', 'undefined') ELSE '' END
         || CASE WHEN t.environment = 'live' THEN ':live' ELSE '' END,
       'corrected_ref',
       '[' || to_json(o.number)::text || ',' || to_json(o.issued)::text || ']',
       t.id, t.created_at
  FROM transactions t
  JOIN locations l ON l.id = t.location_id
  CROSS JOIN LATERAL (
    SELECT btrim(t.normalized -> 'metadata' ->> 'original_invoice_number', E' \t\n\r\f\v') AS number,
           btrim(t.normalized -> 'metadata' ->> 'original_issue_date', E' \t\n\r\f\v') AS issued
  ) o
 WHERE t.system IN ('es-verifactu', 'es-sii', 'es-ticketbai') AND t.type IN ('refund', 'void')
   AND o.number <> '' AND o.issued <> ''
ON CONFLICT DO NOTHING;
