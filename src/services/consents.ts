import { notFound } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { consentsRepo, type ConsentRow, type ConsentType } from '../store/repos/consents-repo.ts';
import type { AuthContext } from './auth-context.ts';
import type { Deps } from './deps.ts';
import type { ListResult, Page } from './pagination.ts';

export interface ConsentView {
  id: string;
  type: ConsentType;
  version: string;
  granted_at: Date;
  revoked_at: Date | null;
  active: boolean;
}

const toView = (c: ConsentRow): ConsentView => ({
  id: c.id, type: c.type, version: c.version, granted_at: c.granted_at, revoked_at: c.revoked_at, active: c.revoked_at === null,
});

/** Consent records are evidence: revoking keeps the record (with its revocation time), it never deletes. */
export function createConsentService(deps: Deps) {
  const { db, clock } = deps;
  return {
    async list(auth: AuthContext, page: Page): Promise<ListResult<ConsentView>> {
      const { rows, total } = await consentsRepo.list(db, auth.accountId, page.limit, page.offset);
      return { data: rows.map(toView), total, ...page };
    },
    /**
     * Grants a consent. Granting a type and version that is already given (not revoked) is a
     * repetition, not a new grant: the standing record is answered (`created: false`) and
     * nothing is stored, so a retried request never leaves a second active record behind the
     * one the client revokes. After a revocation, a grant is a new record.
     */
    async grant(auth: AuthContext, input: { type: ConsentType; version: string }): Promise<{ consent: ConsentView; created: boolean }> {
      const version = input.version.trim();
      return db.transaction(async (tx) => {
        await consentsRepo.lockGrants(tx, auth.accountId);
        const standing = await consentsRepo.active(tx, auth.accountId, input.type, version);
        if (standing) return { consent: toView(standing), created: false };
        const row: ConsentRow = { id: newId(), account_id: auth.accountId, type: input.type, version, granted_at: clock.now(), revoked_at: null };
        await consentsRepo.insert(tx, row);
        return { consent: toView(row), created: true };
      });
    },
    async revoke(auth: AuthContext, id: string): Promise<ConsentView> {
      const row = await consentsRepo.revoke(db, auth.accountId, id, clock.now());
      if (!row) throw notFound('consent not found');
      return toView(row);
    },
  };
}
