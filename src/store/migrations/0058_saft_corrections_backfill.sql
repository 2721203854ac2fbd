-- Portugal (docs: "Portugal: credit and debit notes stored before their registration hold
-- their documents too"): a document that standing credit notes (NC) or debit notes (ND)
-- name cannot be cancelled (services/corrected-sales.ts refuseCancelWhileCorrected), read
-- from the `corrected` rows of chain_documents. NCs stored before session 26 and NDs stored
-- before this migration registered none, so their documents could still be cancelled (and
-- an old NC did not count against what is left to credit). Each now registers the document
-- it names, as the append registers it today (CorrectionCheck.underLock):
--   chain_key   `corrected:<account>` (`:live` last for live transactions),
--   document    the named sale's transaction id,
-- found as pt-saft/credit-note.ts finds it: metadata.original_invoice_no `<type> <series>/<n>`
-- (a type other than NC, n without leading zero) is the record at place n of the NC's or ND's
-- own location's chain `pt-saft:<location>:<type> <series>` (per environment), whose number
-- is that very InvoiceNo, a sale of the same account and environment. A number that names no
-- such document registers nothing. Whether each NC or ND still stands (cancelled) is read
-- from its status when a cancel or a later NC looks it up, so cancelled ones are registered too.
INSERT INTO chain_documents (chain_key, role, document, transaction_id, created_at)
SELECT 'corrected:' || t.account_id::text || CASE WHEN t.environment = 'live' THEN ':live' ELSE '' END,
       'corrected', o.id::text, t.id, t.created_at
  FROM transactions t
  CROSS JOIN LATERAL (
    SELECT t.normalized -> 'metadata' ->> 'original_invoice_no' AS no,
           regexp_match(t.normalized -> 'metadata' ->> 'original_invoice_no', '^(FT|FS|FR|ND) ([^/^ ]+)/([1-9][0-9]{0,14})$') AS part
  ) n
  JOIN fiscal_records r
    ON r.chain_key = 'pt-saft:' || t.location_id::text || ':' || n.part[1] || ' ' || n.part[2]
                     || CASE WHEN t.environment = 'live' THEN ':live' ELSE '' END
   AND r.seq = n.part[3]::bigint AND r.kind = 'record' AND r.document_number = n.no
  JOIN transactions o
    ON o.id = r.transaction_id AND o.account_id = t.account_id AND o.environment = t.environment AND o.type = 'sale'
 WHERE t.system = 'pt-saft'
   AND (t.type IN ('refund', 'void') OR (t.type = 'sale' AND t.normalized -> 'metadata' ->> 'document_type' = 'ND'))
   AND n.part IS NOT NULL
ON CONFLICT DO NOTHING;
