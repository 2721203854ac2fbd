-- Italy Documento Commerciale: the daily takings (corrispettivi) of each register, one
-- signed DatiCorrispettivi per location, environment, register (pem_matricola) and
-- Italian calendar day (countries/it-dc/corrispettivi). Test and live keys share
-- locations, so the environment is part of the key.
--
-- status: pending (built; waiting to be sent, or to be sent again at next_attempt_at),
-- sent (a run is sending it: claimed until claimed_until; a run that died leaves it to
-- be taken again after that), accepted (AdE answered an IdOperazione: final, never sent
-- again, never rebuilt), rejected (AdE refused it: final for the automatic run).
-- The xml is written once, when the row is created: every resend is the same file, so a
-- file AdE already holds comes back as a duplicate, never as a second day.
CREATE TABLE corrispettivi_submissions (
  id                uuid PRIMARY KEY,
  account_id        uuid NOT NULL REFERENCES accounts (id),
  environment       text NOT NULL CHECK (environment IN ('test', 'live')),
  location_id       uuid NOT NULL REFERENCES locations (id),
  matricola         text NOT NULL,
  day               date NOT NULL,
  progressivo       bigint NOT NULL,               -- Trasmissione/Progressivo, per register
  mode              text NOT NULL CHECK (mode IN ('stub', 'authority')),
  xml               text NOT NULL,
  documents         integer NOT NULL,
  status            text NOT NULL CHECK (status IN ('pending', 'sent', 'accepted', 'rejected')),
  attempts          integer NOT NULL DEFAULT 0,
  next_attempt_at   timestamptz,
  claimed_until     timestamptz,
  id_operazione     text,                          -- AdE's IdOperazione
  code              text,                          -- our code (spec DC table: 0100, 0200, 0403, 0429, 0500)
  message           text,
  authority_code    text,                          -- AdE's own code (00000, 00200, …) or HTTP status
  authority_message text,
  sent_at           timestamptz,
  answered_at       timestamptz,
  created_at        timestamptz NOT NULL,
  updated_at        timestamptz NOT NULL
);
CREATE UNIQUE INDEX corrispettivi_day_idx ON corrispettivi_submissions (location_id, environment, matricola, day);
CREATE UNIQUE INDEX corrispettivi_progressivo_idx ON corrispettivi_submissions (location_id, environment, matricola, progressivo);
-- What a run still has to send.
CREATE INDEX corrispettivi_open_idx ON corrispettivi_submissions (account_id, environment, next_attempt_at) WHERE status IN ('pending', 'sent');
-- Days with documents are found from the transactions of the system, per account.
CREATE INDEX transactions_system_day_idx ON transactions (system, account_id, environment, created_at) WHERE system = 'it-dc';
