/**
 * Loading a PKCS#11 library (a `.so`): one `C_Initialize` per library per process.
 *
 * Cryptoki state is process-wide by the standard (PKCS#11 v2.40 §5.4: a second
 * `C_Initialize` fails with CKR_CRYPTOKI_ALREADY_INITIALIZED, and `C_Finalize` ends every
 * session of the application), so two users of the same library in one process (two
 * runtimes in a test, the service and a key-generation helper) must share one handle:
 * this map counts them and finalizes when the last one lets go. It is the one
 * module-level state of the signer, and it mirrors the library's own.
 */
import pkcs11js from 'pkcs11js';

interface Loaded {
  lib: pkcs11js.PKCS11;
  users: number;
}

const loaded = new Map<string, Loaded>();

/** The library at `path`, loaded and initialized (shared; give it back with `releaseModule`). */
export function acquireModule(path: string): pkcs11js.PKCS11 {
  const hit = loaded.get(path);
  if (hit) {
    hit.users++;
    return hit.lib;
  }
  const lib = new pkcs11js.PKCS11();
  lib.load(path);
  try {
    lib.C_Initialize();
  } catch (err) {
    // Initialized by someone else in this process (not through this map): use it, never finalize it.
    if (!(err instanceof pkcs11js.Pkcs11Error && err.code === pkcs11js.CKR_CRYPTOKI_ALREADY_INITIALIZED)) throw err;
    loaded.set(path, { lib, users: Number.POSITIVE_INFINITY });
    return lib;
  }
  loaded.set(path, { lib, users: 1 });
  return lib;
}

export function releaseModule(path: string): void {
  const hit = loaded.get(path);
  if (!hit) return;
  hit.users--;
  if (hit.users > 0) return;
  loaded.delete(path);
  for (const k of [...logins.keys()]) if (k.startsWith(`${path}\u0000`)) logins.delete(k);
  try {
    hit.lib.C_Finalize();
  } finally {
    hit.lib.close();
  }
}

/** The slot holding the token labelled `label` (labels are blank-padded to 32 bytes), or undefined. */
export function findTokenSlot(lib: pkcs11js.PKCS11, label: string): { slot: Buffer; labels: string[] } | { slot: undefined; labels: string[] } {
  const labels: string[] = [];
  for (const slot of lib.C_GetSlotList(true)) {
    let info: pkcs11js.TokenInfo;
    try {
      info = lib.C_GetTokenInfo(slot);
    } catch {
      continue; // a slot whose token is failing or going away: not the one we look for
    }
    // A token not initialised yet (SoftHSM2's free slot) has no label to match.
    if ((info.flags & pkcs11js.CKF_TOKEN_INITIALIZED) === 0) continue;
    const tokenLabel = info.label.trim();
    labels.push(tokenLabel);
    if (tokenLabel === label) return { slot, labels };
  }
  return { slot: undefined, labels };
}

/** Handles of the objects matching `template` (all of them). */
export function findObjects(lib: pkcs11js.PKCS11, session: Buffer, template: pkcs11js.Template): Buffer[] {
  lib.C_FindObjectsInit(session, template);
  try {
    const out: Buffer[] = [];
    for (;;) {
      const batch = lib.C_FindObjects(session, 16);
      if (batch.length === 0) return out;
      out.push(...batch);
    }
  } finally {
    lib.C_FindObjectsFinal(session);
  }
}

/**
 * Login state is per application and token too (PKCS#11 §5.6: every session of the
 * application shares it), so a second device on a token this process is logged in to gets
 * CKR_USER_ALREADY_LOGGED_IN whatever PIN it gives. The PIN that logged in (its SHA-256) is
 * kept here, so that a second device with another PIN is still refused.
 */
const logins = new Map<string, string>();
const loginKey = (path: string, tokenLabel: string) => `${path}\u0000${tokenLabel}`;

export function rememberLogin(path: string, tokenLabel: string, pinDigest: string): void {
  logins.set(loginKey(path, tokenLabel), pinDigest);
}

/** undefined: no login remembered (the token was logged in by someone else: trust it). */
export function loggedInWith(path: string, tokenLabel: string): string | undefined {
  return logins.get(loginKey(path, tokenLabel));
}
