-- What a transaction's receipt prints of its issuer, as the document was issued
-- (src/receipts/issuer.ts): the location's `name`, `address` and `country_config.legal_name`
-- when its record was built, `{"name", "address", "legal_name"}`. Kept beside the record,
-- not in it: most records are an authority's own document (XML a schema fixes, signed or
-- sent as built), which has no place for them; a reprint after a PATCH of the location
-- prints what the document was issued with. NULL for records stored before this column and
-- for records of no transaction (closures, journal entries, corrections): their receipts
-- print the location's current values.
ALTER TABLE fiscal_records ADD COLUMN IF NOT EXISTS issuer jsonb;
