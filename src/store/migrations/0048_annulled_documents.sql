-- The documents of a chain that a record annuls (FiscalSystem.annulledDocument; Italy DC: a
-- documento di annullo, made by POST /v1/transactions/{id}/cancel or by the request's
-- is_cancellation metadata naming a document of the register). One row per annulment; the
-- append checks under the chain's lock that no earlier annulment of the same document
-- stands (services/transaction-entry.ts `annulOnce`), so a document is annulled once.
CREATE TABLE annulled_documents (
  chain_key      text        NOT NULL,
  document       text        NOT NULL,
  transaction_id uuid        NOT NULL REFERENCES transactions (id),
  created_at     timestamptz NOT NULL,
  PRIMARY KEY (chain_key, document, transaction_id)
);
