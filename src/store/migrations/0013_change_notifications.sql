-- Change notifications for the in-process caches of the request path (src/store/change-feed.ts).
--
-- Authentication (the API key with its account's status) and the location of a create are
-- read on every request; the service keeps them in memory and must hear at once when one
-- changes, whichever node, tool or script changed it. A trigger is the one place that sees
-- every writer: it NOTIFYs `svc_changes` with `<table>:<key>`, delivered to listeners when
-- the writing transaction commits (never for a rollback).
--
-- Only what a cache holds fires: api_keys on the columns authentication reads (not
-- last_used_at, written once a minute per key), accounts on status, locations on any change.
CREATE FUNCTION svc_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'api_keys' THEN
    PERFORM pg_notify('svc_changes', 'api_keys:' || OLD.lookup);
  ELSE
    PERFORM pg_notify('svc_changes', TG_TABLE_NAME || ':' || OLD.id::text);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER api_keys_changed
  AFTER UPDATE OF account_id, environment, lookup, key_hash, permissions, revoked_at OR DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION svc_notify_change();

CREATE TRIGGER accounts_changed
  AFTER UPDATE OF status OR DELETE ON accounts
  FOR EACH ROW EXECUTE FUNCTION svc_notify_change();

CREATE TRIGGER locations_changed
  AFTER UPDATE OR DELETE ON locations
  FOR EACH ROW EXECUTE FUNCTION svc_notify_change();
