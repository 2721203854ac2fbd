-- The authorities' "wait before sending again" (VERI*FACTU TiempoEsperaEnvio, FORMATS.md
-- §2.5), one row per key the plug-in chose (system, issuer, environment: countries/types.ts
-- AuthorityPacing). In the database rather than in each worker, so that the wait AEAT gave
-- one worker holds back every worker. The primary key is the one index a submission reads.
CREATE TABLE authority_pacing (
  pacing_key text PRIMARY KEY,
  not_before timestamptz NOT NULL
);
