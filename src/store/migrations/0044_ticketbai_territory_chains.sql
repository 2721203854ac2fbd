-- TicketBAI: an issuer's invoices are chained per territory, not across territories. Each
-- Diputación certifies the software under its own licence and holds only its own invoices
-- ("the previous invoice issued by the same software", FORMATS.md §1.5), so an Araba
-- invoice must not name a Gipuzkoa one as its previous. Chains were keyed
-- es-ticketbai:<account>:<NIF>[:live][#annulments] and number series
-- es-ticketbai:<account>:<NIF>:<series>[:live]; both now carry the territory after the
-- NIF (countries/es-ticketbai/metadata.ts issuerTerritoryOf).
--
-- An issuer whose locations are all in one territory: its chains and series are renamed,
-- records included, and go on as they were. An issuer in several: each territory gets a
-- chain head and series copied from the shared ones (its next invoice continues the
-- numbers, so none repeats), and the shared records keep their keys.
-- Each issuer (account and NIF) with the key prefix both kinds of key start with, and the
-- territories of its locations.
CREATE TEMPORARY TABLE tbai_issuers ON COMMIT DROP AS
  SELECT 'es-ticketbai:' || l.account_id::text || ':' || COALESCE(l.tax_id, l.id::text) AS prefix,
         array_agg(DISTINCT l.country_config->>'territory') AS territories
    FROM locations l
   WHERE l.system = 'es-ticketbai' AND l.country_config ? 'territory'
   GROUP BY 1;

-- Old chain keys: the prefix and what follows it (nothing, :live, #annulments, or both).
CREATE TEMPORARY TABLE tbai_chain_moves ON COMMIT DROP AS
  SELECT h.chain_key AS old_key, i.territories, i.prefix, substr(h.chain_key, length(i.prefix) + 1) AS rest
    FROM chain_heads h JOIN tbai_issuers i ON starts_with(h.chain_key, i.prefix)
   WHERE substr(h.chain_key, length(i.prefix) + 1) IN ('', ':live', '#annulments', ':live#annulments');

-- One territory: rename.
UPDATE fiscal_records f SET chain_key = m.prefix || ':' || m.territories[1] || m.rest
  FROM tbai_chain_moves m WHERE f.chain_key = m.old_key AND cardinality(m.territories) = 1;
UPDATE chain_heads h SET chain_key = m.prefix || ':' || m.territories[1] || m.rest
  FROM tbai_chain_moves m WHERE h.chain_key = m.old_key AND cardinality(m.territories) = 1;

-- Several: a head per territory, copied.
INSERT INTO chain_heads (chain_key, seq, last_fingerprint, last_fiscal_id, last_issued_at, updated_at, last_link)
SELECT m.prefix || ':' || t.territory || m.rest, h.seq, h.last_fingerprint, h.last_fiscal_id, h.last_issued_at, h.updated_at, h.last_link
  FROM tbai_chain_moves m
  JOIN chain_heads h ON h.chain_key = m.old_key
  CROSS JOIN LATERAL unnest(m.territories) AS t(territory)
 WHERE cardinality(m.territories) > 1
ON CONFLICT (chain_key) DO NOTHING;

-- Number series: <prefix>:<series>[:live] → <prefix>:<territory>:<series>[:live]; a key that
-- already has a territory after the prefix is of the new form.
CREATE TEMPORARY TABLE tbai_series_moves ON COMMIT DROP AS
  SELECT s.numbering_key AS old_key, i.territories, i.prefix, substr(s.numbering_key, length(i.prefix) + 1) AS rest
    FROM number_series s JOIN tbai_issuers i ON starts_with(s.numbering_key, i.prefix || ':')
   WHERE split_part(substr(s.numbering_key, length(i.prefix) + 2), ':', 1) NOT IN ('gipuzkoa', 'araba', 'bizkaia');

INSERT INTO number_series (numbering_key, last_number, updated_at)
SELECT m.prefix || ':' || t.territory || m.rest, s.last_number, s.updated_at
  FROM tbai_series_moves m
  JOIN number_series s ON s.numbering_key = m.old_key
  CROSS JOIN LATERAL unnest(m.territories) AS t(territory)
ON CONFLICT (numbering_key) DO NOTHING;
DELETE FROM number_series s USING tbai_series_moves m WHERE s.numbering_key = m.old_key AND cardinality(m.territories) = 1;
