-- A refund may name the sale it corrects by less than the document it was issued under
-- (docs/decisions.md "Italy SDI: a refund naming a TD07 by number alone", FiscalSystem.
-- issuedDocument `alias`, CorrectedSaleLookup.named `alias`):
-- - chain_documents.alias: a shorter, non-unique name registered with an issued number (SdI:
--   the Numero without its TipoDocumento and year), read through chain_documents_aliases
--   in one indexed lookup within the issuer's scope.
ALTER TABLE chain_documents ADD COLUMN alias text;
CREATE INDEX chain_documents_aliases ON chain_documents (chain_key, role, alias) WHERE alias IS NOT NULL;

-- The SdI issuer's scope is its partita IVA (src/countries/it-sdi/metadata.ts `issuerScope`:
-- `it-sdi:<account>:<partita IVA>`, `:live` last on live keys). A location registered
-- without tax_id (its partita IVA given in country_config only) had its location id there,
-- so its numbers were apart from the other locations of the same partita IVA: a one-time
-- move of those rows to the partita IVA's scope (the config always holds the resolved
-- partita IVA; where tax_id is set the two are equal, so those keys do not change).
UPDATE chain_documents d
   SET chain_key = 'it-sdi:' || l.account_id || ':' || (l.country_config ->> 'partita_iva')
                   || CASE WHEN d.chain_key LIKE '%:live' THEN ':live' ELSE '' END
  FROM transactions t JOIN locations l ON l.id = t.location_id
 WHERE d.transaction_id = t.id AND d.role = 'issued'
   AND l.tax_id IS NULL AND coalesce(l.country_config ->> 'partita_iva', '') <> ''
   AND d.chain_key IN ('it-sdi:' || l.account_id || ':' || l.id, 'it-sdi:' || l.account_id || ':' || l.id || ':live');

-- The numbers SdI issuers registered already (migration 0049 on): document
-- `<TipoDocumento> <year> <Numero>`, the alias is the Numero.
UPDATE chain_documents SET alias = substring(document FROM '^TD[0-9]{2} [0-9]{4} (.+)$')
 WHERE role = 'issued' AND chain_key LIKE 'it-sdi:%';
