-- Certificates: PKCS#12 signing certificates uploaded by an account.
-- The private key, the certificate and its chain are stored only sealed (AES-256-GCM
-- under the MASTER_KEY-derived key, bound to the row id); the metadata columns are the
-- public facts the API shows.

CREATE TABLE certificates (
  id             uuid PRIMARY KEY,
  account_id     uuid NOT NULL REFERENCES accounts (id),
  certificate_id text NOT NULL,          -- user-assigned: [A-Za-z0-9._-]
  subject_cn     text,
  issuer         text,
  not_before     timestamptz NOT NULL,
  not_after      timestamptz NOT NULL,
  nif            text,                   -- from the subject serialNumber (IDCES-/VATES- prefix removed)
  key_material   text NOT NULL,          -- sealed JSON {private_key_pem, certificate_pem, chain_pem[]}
  created_at     timestamptz NOT NULL
);
-- One certificate_id per account, whatever the races: the second INSERT fails here.
CREATE UNIQUE INDEX certificates_account_certificate_id_key ON certificates (account_id, certificate_id);

-- A location shows the expiry of the certificate its country_config references
-- (certificate_id, or seal_certificate_id for Italy DC). Whenever a location's config
-- is written, its cert_expiry is looked up here; uploads and deletions of certificates
-- update the matching locations (store/repos/certificates-repo.ts).
CREATE FUNCTION locations_cert_expiry() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.cert_expiry := (
    SELECT c.not_after FROM certificates c
    WHERE c.account_id = NEW.account_id
      AND c.certificate_id = COALESCE(NEW.country_config ->> 'certificate_id', NEW.country_config ->> 'seal_certificate_id')
  );
  RETURN NEW;
END
$$;

CREATE TRIGGER locations_cert_expiry_trg
  BEFORE INSERT OR UPDATE OF country_config ON locations
  FOR EACH ROW EXECUTE FUNCTION locations_cert_expiry();
