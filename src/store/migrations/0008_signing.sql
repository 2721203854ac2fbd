-- What the next record of a chain must repeat about the last one, beyond its fingerprint
-- (TicketBAI EncadenamientoFacturaAnterior: series, number, issue date).
ALTER TABLE chain_heads ADD COLUMN last_link jsonb;

-- One generated signing certificate per account, for test keys without an uploaded
-- certificate: every sandbox record is signed, so integrators can verify signatures
-- before going live. The key is sealed with MASTER_KEY like uploaded ones.
CREATE TABLE sandbox_certificates (
  account_id      uuid PRIMARY KEY REFERENCES accounts (id),
  certificate_pem text NOT NULL,
  key_material    text NOT NULL,
  created_at      timestamptz NOT NULL
);
