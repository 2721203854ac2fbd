import { badRequest, conflict, notFound } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { isUniqueViolation } from '../store/db.ts';
import { accountsRepo, type AccountRow } from '../store/repos/accounts-repo.ts';
import { consentsRepo } from '../store/repos/consents-repo.ts';
import { RATE_LIMIT_TIERS } from '../ratelimit/tiers.ts';
import type { AccountTiers } from './account-tiers.ts';
import type { ApiKeyService, ApiKeyWithSecret } from './api-keys.ts';
import type { AuthContext } from './auth-context.ts';
import type { Deps } from './deps.ts';
import { FEATURES_BY_TIER } from './features.ts';

export interface AccountView {
  id: string;
  name: string;
  billing_email: string;
  status: AccountRow['status'];
  created_at: Date;
}

export const toAccountView = (a: AccountRow): AccountView => ({
  id: a.id,
  name: a.name,
  billing_email: a.billing_email,
  status: a.status,
  created_at: a.created_at,
});

export interface CreateAccountInput {
  name: string;
  billing_email: string;
  terms_accepted_at?: string | undefined;
  privacy_policy_version?: string | undefined;
}

/** Consent given at sign-up must not claim a moment that has not happened yet (small clock-skew allowance). */
const FUTURE_SKEW_MS = 5 * 60_000;

export function createAccountService(deps: Deps, apiKeys: ApiKeyService, tiers: AccountTiers) {
  const { db, clock } = deps;

  /** Account, its sign-up consents and its first (root, test) key: one commit, or nothing. */
  async function create(input: CreateAccountInput): Promise<{ account: AccountView; api_key: ApiKeyWithSecret }> {
    const hasTerms = input.terms_accepted_at !== undefined;
    const hasPolicy = input.privacy_policy_version !== undefined;
    if (hasTerms !== hasPolicy) throw badRequest('terms_accepted_at and privacy_policy_version must be given together');
    const now = clock.now();
    let acceptedAt: Date | undefined;
    if (hasTerms) {
      acceptedAt = new Date(input.terms_accepted_at!);
      if (Number.isNaN(acceptedAt.getTime())) throw badRequest('terms_accepted_at must be an ISO 8601 date-time');
      if (acceptedAt.getTime() > now.getTime() + FUTURE_SKEW_MS) throw badRequest('terms_accepted_at must not be in the future');
    }
    const account: AccountRow = {
      id: newId(),
      name: input.name.trim(),
      billing_email: input.billing_email.trim(),
      status: 'active',
      status_reason: null,
      status_since: now,
      created_at: now,
      updated_at: now,
    };
    try {
      return await db.transaction(async (tx) => {
        await accountsRepo.insert(tx, account);
        if (acceptedAt) {
          // Sign-up consent covers the terms and the privacy policy of the stated version.
          for (const type of ['terms', 'privacy_policy'] as const) {
            await consentsRepo.insert(tx, {
              id: newId(), account_id: account.id, type, version: input.privacy_policy_version!.trim(), granted_at: acceptedAt, revoked_at: null,
            });
          }
        }
        const apiKey = await apiKeys.issue(tx, account.id, 'Initial test key', 'test', null);
        return { account: toAccountView(account), api_key: apiKey };
      });
    } catch (err) {
      if (isUniqueViolation(err, 'accounts_billing_email_key')) throw conflict('an account with this billing email already exists');
      throw err;
    }
  }

  async function status(auth: AuthContext) {
    const account = await accountsRepo.get(db, auth.accountId);
    if (!account) throw notFound('account not found');
    // The subscription's merchant count (active locations while there is none): AccountTiers.
    const { tier, merchantCount } = await tiers.of(auth.accountId, { fresh: true });
    const bucket = RATE_LIMIT_TIERS[auth.environment === 'test' ? 'sandbox' : tier];
    return {
      account_id: account.id,
      status: account.status,
      tier,
      features: [...FEATURES_BY_TIER[tier]],
      merchant_count: merchantCount,
      enforcement: {
        state: account.status === 'active' ? 'ok' : 'suspended',
        reason: account.status_reason,
        since: account.status_since,
      },
      rate_limit: { requests_per_minute: bucket.requestsPerMinute, burst: bucket.burst },
    };
  }

  return { create, status };
}
