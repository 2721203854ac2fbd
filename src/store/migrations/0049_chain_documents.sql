-- One register of the documents a chain's records name, by role:
--   'annulled': the document a record annuls (migration 0048, FiscalSystem.annulledDocument);
--   'issued':   the number a record is issued under when the request chose it
--               (FiscalSystem.issuedDocument: a client's own invoice number).
-- The append checks under the chain's lock that no earlier row of the same role and
-- document stands (its transaction not refused), so a document is annulled once and a
-- number is issued once (services/transaction-entry.ts `onceInChain`).
ALTER TABLE annulled_documents RENAME TO chain_documents;
ALTER TABLE chain_documents ADD COLUMN role text NOT NULL DEFAULT 'annulled';
ALTER TABLE chain_documents ALTER COLUMN role DROP DEFAULT;
ALTER TABLE chain_documents DROP CONSTRAINT annulled_documents_pkey;
ALTER TABLE chain_documents ADD PRIMARY KEY (chain_key, role, document, transaction_id);
