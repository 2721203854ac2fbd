-- Offline tokens (POST /management/v1/tokens) are Ed25519 JWS signed with a service key
-- (services/offline-tokens.ts). The private key is sealed with MASTER_KEY like record keys
-- (migration 0020); the public JWK is kept in clear for GET /management/v1/keys. One key
-- signs at a time (retired_at NULL, enforced by the partial unique index, so two nodes
-- creating the first key or rotating at once keep one); retired keys stay published until
-- every token they signed has expired.
CREATE TABLE token_signing_keys (
  kid          text PRIMARY KEY,
  public_jwk   text NOT NULL,
  key_material text NOT NULL,
  created_at   timestamptz NOT NULL,
  retired_at   timestamptz
);
CREATE UNIQUE INDEX token_signing_keys_one_current ON token_signing_keys ((true)) WHERE retired_at IS NULL;

-- Portal sessions (POST /v1/portal/sessions): `pss_` tokens stored like API keys, a lookup
-- handle and an HMAC of the whole token, never the token. `key_id` is the root key that
-- opened the session: revoking or rotating that key ends its sessions too.
CREATE TABLE portal_sessions (
  id          uuid PRIMARY KEY,
  account_id  uuid NOT NULL REFERENCES accounts (id),
  key_id      uuid NOT NULL REFERENCES api_keys (id),
  lookup      text NOT NULL,
  token_hash  bytea NOT NULL,
  created_at  timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL,
  revoked_at  timestamptz
);
CREATE INDEX portal_sessions_lookup ON portal_sessions (lookup);
