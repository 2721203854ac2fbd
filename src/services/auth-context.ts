import type { Grant } from '../core/permissions.ts';
import type { Environment } from '../crypto/api-key.ts';

/** Who is calling: resolved once per request by the auth hook. */
export interface AuthContext {
  accountId: string;
  keyId: string;
  environment: Environment;
  /** null = root key. */
  permissions: Grant;
  accountStatus: 'active' | 'suspended' | 'cancelled';
  /** Set when the caller is a portal session (`pss_…`) rather than an API key: keyId is then the root key that opened it. */
  portalSessionId?: string;
}
