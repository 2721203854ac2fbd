-- Record-signing keys (core/record-key.ts): a key the service generates for a location the
-- first time one of its records must be signed by the installation rather than with an
-- uploaded certificate (a fiscal system's `capabilities.recordKey`, e.g. `ec-p256`). One
-- per location and kind, never replaced, so every record of the location's chains
-- verifies with one public key. The private key is sealed with MASTER_KEY like the
-- sandbox certificates' (migration 0008); the public key is kept in clear for verifiers.
CREATE TABLE record_keys (
  location_id    uuid NOT NULL REFERENCES locations (id),
  kind           text NOT NULL,
  account_id     uuid NOT NULL REFERENCES accounts (id),
  key_id         text NOT NULL,
  public_key_pem text NOT NULL,
  key_material   text NOT NULL,
  created_at     timestamptz NOT NULL,
  PRIMARY KEY (location_id, kind)
);
