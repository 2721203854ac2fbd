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
    async grant(auth: AuthContext, input: { type: ConsentType; version: string }): Promise<ConsentView> {
      const row: ConsentRow = { id: newId(), account_id: auth.accountId, type: input.type, version: input.version.trim(), granted_at: clock.now(), revoked_at: null };
      await consentsRepo.insert(db, row);
      return toView(row);
    },
    async revoke(auth: AuthContext, id: string): Promise<ConsentView> {
      const row = await consentsRepo.revoke(db, auth.accountId, id, clock.now());
      if (!row) throw notFound('consent not found');
      return toView(row);
    },
  };
}
