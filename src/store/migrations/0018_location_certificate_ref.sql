-- Which certificate a location names is a fiscal system's fact (the plug-ins'
-- `certificateFields`: `certificate_id` in Spain, `seal_certificate_id` for Italy DC), so
-- the location service resolves it and stores it here; shared SQL (the cert_expiry
-- trigger of migration 0005, the certificates repo) reads this column, not the config.
ALTER TABLE locations ADD COLUMN certificate_ref text;
-- Existing rows: the two fields the plug-ins declared when this migration was written
-- (a one-time backfill; new and patched rows get the column from the service).
UPDATE locations SET certificate_ref = COALESCE(country_config ->> 'certificate_id', country_config ->> 'seal_certificate_id');

CREATE OR REPLACE FUNCTION locations_cert_expiry() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.cert_expiry := (
    SELECT c.not_after FROM certificates c
    WHERE c.account_id = NEW.account_id AND c.certificate_id = NEW.certificate_ref
  );
  RETURN NEW;
END
$$;

DROP TRIGGER locations_cert_expiry_trg ON locations;
CREATE TRIGGER locations_cert_expiry_trg
  BEFORE INSERT OR UPDATE OF country_config, certificate_ref ON locations
  FOR EACH ROW EXECUTE FUNCTION locations_cert_expiry();
CREATE INDEX locations_certificate_ref_idx ON locations (account_id, certificate_ref) WHERE certificate_ref IS NOT NULL;
