import { ConfigError } from '../config.ts';
import type { DerivedKeys } from '../crypto/master-key.ts';
import type { Db } from '../store/db.ts';
import { serverSecretsRepo } from '../store/repos/server-secrets-repo.ts';

/**
 * Records which MASTER_KEY this database was set up with (a check value, not the key)
 * and refuses to start with another one: with a wrong key every API key would be
 * "invalid" and every sealed secret unreadable, a confusing failure far from its cause.
 */
export async function checkMasterKey(db: Db, keys: DerivedKeys): Promise<void> {
  await serverSecretsRepo.insertMasterKeyCheck(db, keys.checkValue);
  if ((await serverSecretsRepo.masterKeyCheck(db)) !== keys.checkValue) {
    throw new ConfigError('MASTER_KEY does not match the key this database was set up with (check value differs); start with the original MASTER_KEY');
  }
}
