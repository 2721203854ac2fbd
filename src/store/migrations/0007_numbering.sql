-- Document numbering apart from chaining: where a system chains every record of an
-- issuer across series (VERI*FACTU), invoice numbers still run 1, 2, 3… within each
-- series, without gaps. One counter row per numbering key, locked by its increment.
CREATE TABLE number_series (
  numbering_key text PRIMARY KEY,
  last_number   bigint NOT NULL,
  updated_at    timestamptz NOT NULL
);
