-- The guard of the create's one-statement append (services/transactions.ts, the "fast"
-- append). A batch built on the chain head this node remembers is written by a single
-- autocommitted statement, no BEGIN/COMMIT: it must fail as a whole when what it was
-- built on no longer holds (another node appended to the chain, or the account has
-- webhook subscriptions whose deliveries need the transactional path). Plain SQL cannot
-- raise an error on a condition, hence this function: it raises `code` (a SQLSTATE of
-- our own, class SV) with `message` when `ok` is false, and answers true otherwise.
CREATE FUNCTION svc_assert(ok boolean, code text, message text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  IF ok IS NOT TRUE THEN
    RAISE EXCEPTION USING ERRCODE = code, MESSAGE = message;
  END IF;
  RETURN true;
END
$$;
