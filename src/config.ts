import fs from 'node:fs';
import crypto from 'node:crypto';
import path from 'node:path';
import { generateMasterKey, parseMasterKey } from './crypto/master-key.ts';
import { DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS, DEFAULT_LONG_STATEMENT_TIMEOUT_MS, DEFAULT_STATEMENT_TIMEOUT_MS } from './store/timeouts.ts';

/**
 * The one place that reads process.env. A bad setting stops start-up with a message
 * naming it (ConfigError), rather than failing later on a request.
 */
export type Mode = 'cloud' | 'local';

export interface Config {
  mode: Mode;
  host: string;
  port: number;
  dataDir: string;
  databaseUrl: string | undefined;
  /**
   * PostgreSQL only (docs/decisions.md "PostgreSQL statement bounds"): the bound of an API
   * statement in ms (DATABASE_STATEMENT_TIMEOUT_MS, default 30 000, 100 to 3 600 000; no
   * "none": a request must never hang), past which it answers 503 with Retry-After.
   */
  databaseStatementTimeoutMs: number;
  /**
   * The bound of a statement of long work: batch processors, month files, archives
   * (DATABASE_LONG_STATEMENT_TIMEOUT_MS, default 3 600 000; 0: none). Migrations have none.
   */
  databaseLongStatementTimeoutMs: number;
  /**
   * How long a transaction may sit idle between its statements before PostgreSQL ends it
   * (DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS, default 60 000, 100 to 3 600 000; no "none":
   * a hung node must not hold its locks for as long as its connection lives). Long work
   * takes its statement bound instead; migrations have none.
   */
  databaseIdleInTransactionTimeoutMs: number;
  redisUrl: string | undefined;
  masterKey: Buffer;
  /** Where the master key came from, for the start-up log. */
  masterKeySource: 'env' | 'file' | 'generated';
  liveEnabled: boolean;
  webhookAllowInsecure: boolean;
  logLevel: string;
  bodyLimitBytes: number;
  /** Attempts per submission before failed_permanent (FISCALIZATION_SUBMISSION_RETRY_MAX). */
  submissionMaxAttempts: number;
  /** First retry delay in ms; doubles per attempt (FISCALIZATION_SUBMISSION_RETRY_DELAY, seconds). */
  submissionRetryBaseMs: number;
  /** Run the job workers inside `serve` (WORKERS_IN_PROCESS); off when `worker` processes run apart. */
  workersInProcess: boolean;
  /** AI translation of unknown authority errors; undefined = not configured (errors pass through untranslated). */
  translationAi: TranslationAiConfig | undefined;
  /**
   * Authority base URLs replacing the built-in ones, keyed `<system>:<environment>`
   * (AUTHORITY_URL_<SYSTEM>_<ENV>, e.g. AUTHORITY_URL_ES_VERIFACTU_TEST): scheme and host
   * are replaced, each client keeps its service path.
   */
  authorityBaseUrls: Record<string, string>;
  /** Extra CA certificates (PEM) trusted for authority servers (AUTHORITY_CA_FILE), e.g. a test proxy. */
  authorityCa: string | undefined;
  /**
   * The shared secret of each inbound authority channel, by channel name:
   * `<NAME>_INBOUND_SECRET` (DECISIONS: `SDI_INBOUND_SECRET` for `POST /v1/inbound/sdi`).
   */
  inboundSecrets: Record<string, string>;
  /**
   * The certificates (PEM) each inbound channel's signed messages must chain to, by
   * channel name: `<NAME>_NOTIFICATION_CA_FILE` (e.g. `SDI_NOTIFICATION_CA_FILE`, the CA of
   * SdI's signing certificate). Set: an unsigned message is refused; unset: a signature
   * present is still verified, with the certificate it carries.
   */
  inboundCa: Record<string, string>;
  /** The software identity fiscal records carry (SOFTWARE_NAME, SOFTWARE_VENDOR_NIF). */
  softwareName: string;
  softwareVendorNif: string;
  /**
   * The software producer's signing key of each country that certifies the program and
   * its key pair (one key per certified program), by upper-case country code:
   * `<CC>_SOFTWARE_KEY_FILE` (PEM private key), `<CC>_SOFTWARE_KEY_VERSION` (the key's
   * version as the authority numbers it, default 1) and `<CC>_SOFTWARE_CERTIFICATE_NUMBER`
   * (the program's certificate number, optional). Read and parsed at start-up.
   */
  producerKeys: Record<string, { privateKey: crypto.KeyObject; version: string; certificateNumber?: string }>;
  /** The real billing provider (STRIPE_API_KEY, STRIPE_API_BASE_URL, STRIPE_PRODUCT_ID); undefined = the embedded one, which charges nothing. */
  billingProvider: BillingProviderConfig | undefined;
  /** BILLING_WEBHOOK_SECRET: signs the billing provider's events; unset, the billing receiver refuses every delivery. */
  billingWebhookSecret: string | undefined;
  /** SMTP_URL (smtp:// or smtps://): notification e-mail; unset, messages wait in the outbox. SMTP_FROM: the sender. */
  smtpUrl: string | undefined;
  smtpFrom: string | undefined;
  /** METRICS_TOKEN: the bearer token `GET /metrics` asks for; unset, it answers loopback clients only. */
  metricsToken: string | undefined;
  /** METRICS_PORT: the `worker` command serves `GET /metrics` on HOST:METRICS_PORT (it has no API server); unset, none. */
  metricsPort: number | undefined;
  /**
   * HardwareDevice mode (SIGNING_DEVICE=pkcs11, docs/hardware-device.md): the private keys
   * live in a PKCS#11 token, opened at start-up (signing/pkcs11/configured.ts); undefined:
   * keys in process, as always.
   */
  signingDevice?: SigningDeviceConfig | undefined;
}

/** SIGNING_DEVICE=pkcs11 and its PKCS11_* settings, checked for shape here and against the token at start-up. */
export interface SigningDeviceConfig {
  /** PKCS11_MODULE (default SoftHSM2's library). */
  module: string;
  /** PKCS11_TOKEN_LABEL */
  tokenLabel: string;
  /** PKCS11_PIN */
  pin: string;
  keys: {
    /** PKCS11_KEY_RECORDS: France NF525's EC P-256 record key. */
    records: string | undefined;
    /** PKCS11_KEY_CERTIFICATE: the RSA key whose certificate (same CKA_ID, in the token) signs TicketBAI and Italy's XAdES. */
    certificate: string | undefined;
    /** PKCS11_KEY_PRODUCER_<CC>: software producer keys (Portugal SAF-T), by country. */
    producer: Record<string, string>;
  };
  /** Each producer key's version and certificate number (<CC>_SOFTWARE_KEY_VERSION, <CC>_SOFTWARE_CERTIFICATE_NUMBER). */
  producerInfo: Record<string, { version: string; certificateNumber?: string }>;
}

/** The Stripe-compatible billing API (src/billing/stripe-provider.ts). */
export interface BillingProviderConfig {
  apiKey: string;
  /** Overrides the provider's API address (a proxy, a test double). */
  apiBaseUrl: string | undefined;
  /** The product recurring prices belong to; created on first use when unset. */
  productId: string | undefined;
}

function billingProvider(env: Env): BillingProviderConfig | undefined {
  const apiKey = env.STRIPE_API_KEY?.trim();
  const apiBaseUrl = url(env, 'STRIPE_API_BASE_URL', ['https:', 'http:']);
  if (!apiKey) {
    if (apiBaseUrl) throw new ConfigError('STRIPE_API_BASE_URL is set but STRIPE_API_KEY is not');
    return undefined;
  }
  return { apiKey, apiBaseUrl, productId: env.STRIPE_PRODUCT_ID?.trim() || undefined };
}

/** An OpenAI-compatible Chat Completions endpoint (TRANSLATION_AI_*). */
export interface TranslationAiConfig {
  /** Base URL; requests go to `{url}/chat/completions` (e.g. https://api.openai.com/v1). */
  url: string;
  /** Bearer key; optional for endpoints that need none (a local model server). */
  key: string | undefined;
  model: string;
  /** Per-request timeout. */
  timeoutMs: number;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function bool(env: Env, name: string, fallback: boolean): boolean {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(v)) return true;
  if (/^(0|false|no|off)$/i.test(v)) return false;
  throw new ConfigError(`${name} must be true or false (got "${v}")`);
}

/**
 * Live mode (spec "Authentication" 3): "enabled by server setting `live_mode` (default
 * false) or environment variable `FISCALIZATION_LIVE_ENABLED=true`". Our settings are
 * the environment, so the setting is read as `LIVE_MODE` (or `live_mode`, as the spec
 * spells it); either one true enables it.
 */
function liveMode(env: Env): boolean {
  const setting = ['LIVE_MODE', 'live_mode'].some((name) => bool(env, name, false));
  return bool(env, 'FISCALIZATION_LIVE_ENABLED', false) || setting;
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got "${v}")`);
  return n;
}

/** DATABASE_LONG_STATEMENT_TIMEOUT_MS: 0 (none), or from 1 s to 7 days. */
function longStatementTimeout(env: Env): number {
  const name = 'DATABASE_LONG_STATEMENT_TIMEOUT_MS';
  const v = env[name];
  if (v === undefined || v === '') return DEFAULT_LONG_STATEMENT_TIMEOUT_MS;
  const n = Number(v);
  if (!Number.isInteger(n) || (n !== 0 && (n < 1_000 || n > 7 * 86_400_000))) {
    throw new ConfigError(`${name} must be 0 (no bound) or an integer from 1000 to ${7 * 86_400_000} (got "${v}")`);
  }
  return n;
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const v = env[name];
  if (v === undefined || v === '') return undefined;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new ConfigError(`${name} is not a valid URL`);
  }
  if (!protocols.includes(u.protocol)) throw new ConfigError(`${name} must be a ${protocols.join(' or ')} URL`);
  return v;
}

/**
 * MASTER_KEY from the environment, else from `<DATA_DIR>/master.key`, else generated
 * there once (mode 0600). The file fallback is for one node on the embedded store; a
 * fleet of nodes on PostgreSQL must share one MASTER_KEY (a node with another key
 * refuses to start: see services/server-secrets.ts).
 */
function loadMasterKey(env: Env, dataDir: string): { key: Buffer; source: Config['masterKeySource'] } {
  const fromEnv = env.MASTER_KEY;
  if (fromEnv) {
    try {
      return { key: parseMasterKey(fromEnv), source: 'env' };
    } catch (e) {
      throw new ConfigError((e as Error).message);
    }
  }
  const file = path.join(dataDir, 'master.key');
  if (fs.existsSync(file)) {
    try {
      return { key: parseMasterKey(fs.readFileSync(file, 'utf8')), source: 'file' };
    } catch (e) {
      throw new ConfigError(`${file}: ${(e as Error).message}`);
    }
  }
  fs.mkdirSync(dataDir, { recursive: true });
  const text = generateMasterKey();
  fs.writeFileSync(file, text + '\n', { mode: 0o600, flag: 'wx' });
  return { key: parseMasterKey(text), source: 'generated' };
}

/** TRANSLATION_AI_URL (http or https) turns AI translation on; it then needs a model. */
function translationAi(env: Env): TranslationAiConfig | undefined {
  const aiUrl = url(env, 'TRANSLATION_AI_URL', ['http:', 'https:']);
  const key = env.TRANSLATION_AI_KEY || undefined;
  const model = env.TRANSLATION_AI_MODEL?.trim() || undefined;
  const timeoutMs = int(env, 'TRANSLATION_AI_TIMEOUT_MS', 10_000, 100, 120_000);
  if (!aiUrl) {
    if (key || model) throw new ConfigError('TRANSLATION_AI_URL is required when TRANSLATION_AI_KEY or TRANSLATION_AI_MODEL is set');
    return undefined;
  }
  if (!model) throw new ConfigError('TRANSLATION_AI_MODEL is required when TRANSLATION_AI_URL is set');
  return { url: aiUrl, key, model, timeoutMs };
}

const AUTHORITY_URL_RE = /^AUTHORITY_URL_([A-Z]{2}_[A-Z0-9_]+)_(TEST|LIVE)$/;

/**
 * AUTHORITY_URL_<SYSTEM>_<ENV>: `<system>` is the system key in upper case with `_` for `-`.
 * `systems`: the keys a name may use (another stops start-up); undefined takes any.
 */
function authorityBaseUrls(env: Env, systems: readonly string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(env).sort()) {
    const m = AUTHORITY_URL_RE.exec(name);
    if (!m) continue;
    const system = m[1]!.toLowerCase().replaceAll('_', '-');
    if (systems && !systems.includes(system)) throw new ConfigError(`${name}: unknown system "${system}" (known: ${systems.join(', ')})`);
    const value = url(env, name, ['https:', 'http:']);
    if (value) out[`${system}:${m[2]!.toLowerCase()}`] = value.replace(/\/+$/, '');
  }
  return out;
}

/** Every `<NAME>_INBOUND_SECRET`, by lower-case channel name (this module knows no plug-in). */
function inboundSecrets(env: Env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    const m = /^([A-Z][A-Z0-9]*)_INBOUND_SECRET$/.exec(name);
    if (!m || value === undefined || value === '') continue;
    if (value.length < 16) throw new ConfigError(`${name} must be at least 16 characters`);
    out[m[1]!.toLowerCase()] = value;
  }
  return out;
}

/** Every `<CC>_SOFTWARE_KEY_FILE` with its version and certificate number (Config.producerKeys). */
function producerKeys(env: Env): Config['producerKeys'] {
  const out: Config['producerKeys'] = {};
  for (const [name, file] of Object.entries(env)) {
    const m = /^([A-Z]{2})_SOFTWARE_KEY_FILE$/.exec(name);
    if (!m || file === undefined || file === '') continue;
    const cc = m[1]!;
    let pem: string;
    try {
      pem = fs.readFileSync(file, 'utf8');
    } catch (e) {
      throw new ConfigError(`${name}: cannot read ${file}: ${(e as Error).message}`);
    }
    let privateKey: crypto.KeyObject;
    try {
      privateKey = crypto.createPrivateKey(pem);
    } catch (e) {
      throw new ConfigError(`${name} must hold an unencrypted PEM private key (${(e as Error).message})`);
    }
    const version = env[`${cc}_SOFTWARE_KEY_VERSION`]?.trim() || '1';
    if (!/^[1-9][0-9]{0,8}$/.test(version)) throw new ConfigError(`${cc}_SOFTWARE_KEY_VERSION must be a positive integer (got "${version}")`);
    const certificateNumber = env[`${cc}_SOFTWARE_CERTIFICATE_NUMBER`]?.trim() || undefined;
    if (certificateNumber !== undefined && !/^[0-9]+$/.test(certificateNumber)) {
      throw new ConfigError(`${cc}_SOFTWARE_CERTIFICATE_NUMBER must contain only digits (got "${certificateNumber}")`);
    }
    out[cc] = { privateKey, version, ...(certificateNumber !== undefined ? { certificateNumber } : {}) };
  }
  return out;
}

/** The `<CC>_SOFTWARE_KEY_VERSION` and `<CC>_SOFTWARE_CERTIFICATE_NUMBER` of a producer key. */
function producerKeyInfo(env: Env, cc: string): { version: string; certificateNumber?: string } {
  const version = env[`${cc}_SOFTWARE_KEY_VERSION`]?.trim() || '1';
  if (!/^[1-9][0-9]{0,8}$/.test(version)) throw new ConfigError(`${cc}_SOFTWARE_KEY_VERSION must be a positive integer (got "${version}")`);
  const certificateNumber = env[`${cc}_SOFTWARE_CERTIFICATE_NUMBER`]?.trim() || undefined;
  if (certificateNumber !== undefined && !/^[0-9]+$/.test(certificateNumber)) {
    throw new ConfigError(`${cc}_SOFTWARE_CERTIFICATE_NUMBER must contain only digits (got "${certificateNumber}")`);
  }
  return { version, ...(certificateNumber !== undefined ? { certificateNumber } : {}) };
}

/**
 * SIGNING_DEVICE (`none`, default, or `pkcs11`) and its PKCS11_* settings. The token itself
 * (label, PIN, keys) is checked when the host opens it (signing/pkcs11/configured.ts).
 */
function signingDevice(env: Env): SigningDeviceConfig | undefined {
  const kind = env.SIGNING_DEVICE?.trim() || 'none';
  // PKCS11_MODULE alone is left alone (other PKCS#11 tools read it too).
  const pkcs11Settings = Object.keys(env).filter((n) => n.startsWith('PKCS11_') && n !== 'PKCS11_MODULE' && env[n]);
  if (kind === 'none') {
    if (pkcs11Settings.length > 0) throw new ConfigError(`${pkcs11Settings[0]} is set but SIGNING_DEVICE is not pkcs11 (set SIGNING_DEVICE=pkcs11 to sign with the token)`);
    return undefined;
  }
  if (kind !== 'pkcs11') throw new ConfigError(`SIGNING_DEVICE must be none or pkcs11 (got "${kind}")`);
  // A misspelt name (PKCS11_KEY_RECORD, PKCS11_KEY_PRODUCER_pt) would leave that purpose's key
  // in process without a word: every PKCS11_* name must be one of ours.
  for (const name of pkcs11Settings) {
    if (!/^PKCS11_(TOKEN_LABEL|PIN|KEY_RECORDS|KEY_CERTIFICATE|KEY_PRODUCER_[A-Z]{2})$/.test(name)) {
      throw new ConfigError(`${name} is not a setting of SIGNING_DEVICE=pkcs11 (known: PKCS11_MODULE, PKCS11_TOKEN_LABEL, PKCS11_PIN, PKCS11_KEY_RECORDS, PKCS11_KEY_CERTIFICATE, PKCS11_KEY_PRODUCER_<CC> with an upper-case country code)`);
    }
  }
  const tokenLabel = env.PKCS11_TOKEN_LABEL?.trim();
  if (!tokenLabel) throw new ConfigError('PKCS11_TOKEN_LABEL is required when SIGNING_DEVICE is pkcs11');
  const pin = env.PKCS11_PIN;
  if (!pin) throw new ConfigError('PKCS11_PIN is required when SIGNING_DEVICE is pkcs11');
  const producer: Record<string, string> = {};
  const producerInfo: SigningDeviceConfig['producerInfo'] = {};
  for (const [name, value] of Object.entries(env)) {
    const m = /^PKCS11_KEY_PRODUCER_([A-Z]{2})$/.exec(name);
    if (!m || !value?.trim()) continue;
    const cc = m[1]!;
    // One place for the key: in the token, or a file, not both.
    if (env[`${cc}_SOFTWARE_KEY_FILE`]) throw new ConfigError(`${name} and ${cc}_SOFTWARE_KEY_FILE are both set: the producer key is in the token (unset ${cc}_SOFTWARE_KEY_FILE)`);
    producer[cc] = value.trim();
    producerInfo[cc] = producerKeyInfo(env, cc);
  }
  const keys = { records: env.PKCS11_KEY_RECORDS?.trim() || undefined, certificate: env.PKCS11_KEY_CERTIFICATE?.trim() || undefined, producer };
  if (!keys.records && !keys.certificate && Object.keys(producer).length === 0) {
    throw new ConfigError('SIGNING_DEVICE=pkcs11 needs at least one key label: PKCS11_KEY_RECORDS, PKCS11_KEY_CERTIFICATE or PKCS11_KEY_PRODUCER_<CC>');
  }
  return { module: env.PKCS11_MODULE?.trim() || '/usr/lib/softhsm/libsofthsm2.so', tokenLabel, pin, keys, producerInfo };
}

/** Every `<NAME>_NOTIFICATION_CA_FILE`, read, by lower-case channel name. */
function inboundCa(env: Env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, file] of Object.entries(env)) {
    const m = /^([A-Z][A-Z0-9]*)_NOTIFICATION_CA_FILE$/.exec(name);
    if (!m || file === undefined || file === '') continue;
    let pem: string;
    try {
      pem = fs.readFileSync(file, 'utf8');
    } catch (e) {
      throw new ConfigError(`${name}: cannot read ${file}: ${(e as Error).message}`);
    }
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new ConfigError(`${name} must hold PEM certificates`);
    out[m[1]!.toLowerCase()] = pem;
  }
  return out;
}

/** METRICS_TOKEN: at least 16 characters (a short token is a guessable one), no spaces (it travels as a bearer token). */
function metricsToken(env: Env): string | undefined {
  const v = env.METRICS_TOKEN;
  if (v === undefined || v === '') return undefined;
  if (v.length < 16 || /\s/.test(v)) throw new ConfigError('METRICS_TOKEN must be at least 16 characters, without spaces');
  return v;
}

function authorityCa(env: Env): string | undefined {
  const file = env.AUTHORITY_CA_FILE;
  if (!file) return undefined;
  let pem: string;
  try {
    pem = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(`AUTHORITY_CA_FILE: cannot read ${file}: ${(e as Error).message}`);
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new ConfigError('AUTHORITY_CA_FILE must hold PEM certificates');
  return pem;
}

/**
 * `systems`: the fiscal system keys an AUTHORITY_URL_* may name; the host passes them
 * (main.ts: countries/registry.ts SYSTEM_KEYS), as this module knows no plug-in.
 */
export function loadConfig(env: Env = process.env, mode: Mode = 'cloud', systems?: readonly string[]): Config {
  const dataDir = path.resolve(env.DATA_DIR || './data');
  const master = loadMasterKey(env, dataDir);
  // Live records name the real software producer (TicketBAI EntidadDesarrolladora, VERI*FACTU
  // SistemaInformatico); the sandbox default is a test identity that must never reach them.
  const liveEnabled = liveMode(env);
  if (liveEnabled && !env.SOFTWARE_VENDOR_NIF?.trim()) {
    throw new ConfigError('SOFTWARE_VENDOR_NIF is required when live mode is enabled (FISCALIZATION_LIVE_ENABLED or LIVE_MODE)');
  }
  return {
    mode,
    host: env.HOST || '127.0.0.1',
    port: int(env, 'PORT', mode === 'local' ? 8080 : 3000, 0, 65535),
    dataDir,
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    databaseStatementTimeoutMs: int(env, 'DATABASE_STATEMENT_TIMEOUT_MS', DEFAULT_STATEMENT_TIMEOUT_MS, 100, 3_600_000),
    databaseLongStatementTimeoutMs: longStatementTimeout(env),
    databaseIdleInTransactionTimeoutMs: int(env, 'DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS, 100, 3_600_000),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    masterKey: master.key,
    masterKeySource: master.source,
    liveEnabled,
    webhookAllowInsecure: bool(env, 'WEBHOOK_ALLOW_INSECURE', mode === 'local'),
    logLevel: env.LOG_LEVEL || 'info',
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    submissionMaxAttempts: int(env, 'FISCALIZATION_SUBMISSION_RETRY_MAX', mode === 'local' ? 20 : 50, 1, 10_000),
    submissionRetryBaseMs: int(env, 'FISCALIZATION_SUBMISSION_RETRY_DELAY', 2, 1, 86_400) * 1000,
    workersInProcess: bool(env, 'WORKERS_IN_PROCESS', true),
    translationAi: translationAi(env),
    authorityBaseUrls: authorityBaseUrls(env, systems),
    inboundSecrets: inboundSecrets(env),
    inboundCa: inboundCa(env),
    authorityCa: authorityCa(env),
    softwareName: env.SOFTWARE_NAME?.trim() || 'Fiscalization API',
    // The producer's NIF, written in TicketBAI EntidadDesarrolladora and VERI*FACTU SistemaInformatico.
    softwareVendorNif: env.SOFTWARE_VENDOR_NIF?.trim() ?? '',
    producerKeys: producerKeys(env),
    billingProvider: billingProvider(env),
    // Any length: the provider issues it (its own are long); the deployment does not choose it.
    billingWebhookSecret: env.BILLING_WEBHOOK_SECRET || undefined,
    smtpUrl: url(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    smtpFrom: env.SMTP_FROM?.trim() || undefined,
    signingDevice: signingDevice(env),
    metricsToken: metricsToken(env),
    metricsPort: env.METRICS_PORT === undefined || env.METRICS_PORT === '' ? undefined : int(env, 'METRICS_PORT', 0, 1, 65535),
  };
}
