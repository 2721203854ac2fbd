-- Error translations: the permanent cache of AI-translated authority errors.
-- Static catalog hits are never stored (the catalog is code); only AI answers are.

CREATE TABLE error_translations (
  country          text NOT NULL,                 -- ES, IT, FR (the job may also store PT, GR)
  system           text NOT NULL,                 -- ticketbai, verifactu, sii, sdi, dc, nf525…; '' when the caller named none
  error_code       text NOT NULL,                 -- trimmed, upper-cased
  message_hash     text NOT NULL,                 -- SHA-256 hex of the trimmed message ('' when there was none)
  original_message text,                          -- the message that was translated (for review)
  translation      text NOT NULL,
  category         text NOT NULL CHECK (category IN ('validation', 'auth', 'submission', 'network', 'configuration', 'unknown')),
  severity         text NOT NULL CHECK (severity IN ('error', 'warning', 'info')),
  retriable        boolean NOT NULL,
  user_message     text NOT NULL,
  model            text NOT NULL,                 -- the model that answered
  created_at       timestamptz NOT NULL,
  -- One row per key, whatever the races: a second writer's INSERT … ON CONFLICT DO NOTHING
  -- leaves the first answer in place and both callers read it back.
  PRIMARY KEY (country, system, error_code, message_hash)
);
