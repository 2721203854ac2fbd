import { ConfigError } from '../config.ts';
import type { DerivedKeys } from '../crypto/master-key.ts';
import type { Db } from '../store/db.ts';

/**
 * Records which MASTER_KEY this database was set up with (a check value, not the key)
 * and refuses to start with another one: with a wrong key every API key would be
 * "invalid" and every sealed secret unreadable, a confusing failure far from its cause.
 */
export async function checkMasterKey(db: Db, keys: DerivedKeys): Promise<void> {
  await db.query(
    `INSERT INTO server_secrets (name, check_value) VALUES ('master_key', $1) ON CONFLICT (name) DO NOTHING`,
    [keys.checkValue],
  );
  const row = (await db.query<{ check_value: string }>(`SELECT check_value FROM server_secrets WHERE name = 'master_key'`)).rows[0];
  if (row?.check_value !== keys.checkValue) {
    throw new ConfigError('MASTER_KEY does not match the key this database was set up with (check value differs); start with the original MASTER_KEY');
  }
}
