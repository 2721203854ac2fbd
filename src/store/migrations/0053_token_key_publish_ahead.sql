-- Offline-token signing keys are published before they sign (services/offline-tokens.ts,
-- docs/decisions.md "Offline tokens: the next signing key is published ahead"): at the
-- scheduled rotation the next key is stored with `signs_from` in the future, listed in
-- GET /management/v1/keys from then on, and the key it replaces gets `retired_at` = that
-- same instant (it signs until then). `retired_at IS NULL` still marks one key, the newest
-- (the partial unique index of migration 0028: two nodes preparing the next key keep one).
-- Keys stored before this migration signed from their creation.
ALTER TABLE token_signing_keys ADD COLUMN signs_from timestamptz;
UPDATE token_signing_keys SET signs_from = created_at;
ALTER TABLE token_signing_keys ALTER COLUMN signs_from SET NOT NULL;
