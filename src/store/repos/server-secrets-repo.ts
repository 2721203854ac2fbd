import type { Queryable } from '../db.ts';

/** The `server_secrets` table: check values of the node's secrets (never the secrets). */
export const serverSecretsRepo = {
  /** Records the MASTER_KEY check value unless one is already there (the first node's). */
  async insertMasterKeyCheck(q: Queryable, checkValue: string): Promise<void> {
    await q.query(
      `INSERT INTO server_secrets (name, check_value) VALUES ('master_key', $1) ON CONFLICT (name) DO NOTHING`,
      [checkValue],
    );
  },

  /** The MASTER_KEY check value this database was set up with. */
  async masterKeyCheck(q: Queryable): Promise<string | undefined> {
    return (await q.query<{ check_value: string }>(`SELECT check_value FROM server_secrets WHERE name = 'master_key'`)).rows[0]?.check_value;
  },
};
