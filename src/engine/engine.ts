/**
 * The embedded engine behind `fiscalCall` (issue #17; spec "Embedded engine call
 * envelope"; DECISIONS "One core, three hosts"): the same service core as the cloud host
 * (src/runtime.ts createRuntime: services → countries → ledger → jobs) over the embedded
 * store (PGlite) in `data_dir`. This module only adapts: envelope in, a service call with
 * the AuthContext the offline token proves, envelope out. No validation, record building,
 * chaining, signing or submission of its own.
 *
 * Never throws: every failure becomes `{version: 1, error: {code, message}}` (errors.ts).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { ConfigError, loadConfig } from '../config.ts';
import { systemClock, type Clock } from '../core/clock.ts';
import { ACTION_PERMISSIONS } from '../core/permissions.ts';
import { COUNTRIES } from '../countries/registry.ts';
import { deriveKeys } from '../crypto/master-key.ts';
import { validatorCompiler, schemaErrorFormatter } from '../http/validation.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan, TOO_DEEP_BODY } from '../core/json-depth.ts';
import { stringFault } from '../core/body-strings.ts';
import { CreateBody as LocationCreateBody, PatchBody as LocationPatchBody } from '../http/routes/v1/locations.ts';
import { EMBEDDED_BACKOFF } from '../jobs/backoff.ts';
import { createMemoryLimiter } from '../ratelimit/memory-limiter.ts';
import type { RateLimiter } from '../ratelimit/limiter.ts';
import { signingDeviceOptionsFromParams } from '../signing/pkcs11/configured.ts';
import { openSigningDevice, SigningDeviceError, type SigningDevice, type SigningDeviceOptions } from '../signing/pkcs11/device.ts';
import { createRuntime, DEFAULT_SOFTWARE, type Runtime, type RuntimeOptions } from '../runtime.ts';
import type { AuthContext } from '../services/auth-context.ts';
import { ENGINE_ENVIRONMENTS, TOKEN_ERRORS, type EngineEnvironment } from '../services/offline-tokens.ts';
import type { CreateLocationInput, PatchLocationInput } from '../services/locations.ts';
import { checkMasterKey } from '../services/server-secrets.ts';
import type { Db } from '../store/db.ts';
import { migrate } from '../store/migrate.ts';
import { openDb } from '../store/open.ts';
import { accountsRepo } from '../store/repos/accounts-repo.ts';
import { catchUpQueue } from '../jobs/catch-up.ts';
import { DataDirInUse, lockDataDir } from '../store/data-dir-lock.ts';
import { EngineError, toEngineError } from './errors.ts';
import { queueStatus } from './queue.ts';
import { createTelemetry, type Telemetry } from './telemetry.ts';
import { obtainToken } from './token.ts';

export const ENVELOPE_VERSION = 1;

export type EngineRequest = { version: number; method: string; params?: Record<string, unknown> };
export type EngineResponse =
  | { version: 1; result: Record<string, unknown> }
  | { version: 1; error: { code: string; message: string } };

/** queue_init's settings, kept across restarts (defaults: FISCALIZATION_SUBMISSION_RETRY_MAX / _DELAY, else 20 attempts, 2 s). */
const QUEUE_FILE = 'engine-queue.json';
/** The settings the engine reads from its process's environment (the rest are init params). */
const ENGINE_ENV_SETTINGS = ['MASTER_KEY', 'FISCALIZATION_SUBMISSION_RETRY_MAX', 'FISCALIZATION_SUBMISSION_RETRY_DELAY'] as const;
const AGENT_FILE = 'engine-agent-id';
const STORE_DIR = 'store';
const DEFAULT_TELEMETRY_SECONDS = 300;

export interface EngineOptions {
  /** The engine's clock (tests: a ManualClock to drive backoff and deadlines). */
  clock?: Clock;
  /** Where the engine logs (default: pino to stderr, LOG_LEVEL or `warn`): never stdout, the stdio host's channel. */
  log?: FastifyBaseLogger;
  /** Start the in-process job worker at init (default true; tests drive the queue with process_pending). */
  startWorker?: boolean;
  /** Worker tuning passed to the runtime. */
  worker?: RuntimeOptions['worker'];
  /** The backoff jitter's randomness (tests: a constant, for exact retry times). */
  random?: () => number;
}

interface QueueSettings {
  retry_max: number;
  retry_delay_seconds: number;
}

/** One initialised engine: its store, the runtime over it, who it acts for. */
interface Session {
  db: Db;
  rt: Runtime;
  limiter: RateLimiter;
  auth: AuthContext;
  telemetry: Telemetry;
  timer: NodeJS.Timeout | undefined;
  dataDir: string;
  country: string;
  environment: EngineEnvironment;
  agentId: string;
  /** X-Svc-Sandbox equivalent: `authority` sends test records to the real protocol clients. */
  sandbox: 'authority' | undefined;
  runtimeOptions: Omit<RuntimeOptions, 'config'> & { config: RuntimeOptions['config'] };
  queue: QueueSettings;
  /** Releases the data directory's lock (store/data-dir-lock.ts). */
  unlock: () => void;
  /** The token is the engine's licence: past this, nothing new is fiscalized (`licensed`). */
  tokenExpiresAt: Date;
}

// ---- parameter checks (invalid_params) ----

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const bad = (message: string) => new EngineError('invalid_params', message);

function str(p: Record<string, unknown>, name: string, opts: { optional?: boolean; max?: number } = {}): string | undefined {
  const v = p[name];
  if (v === undefined || v === null) {
    if (opts.optional) return undefined;
    throw bad(`${name} is required`);
  }
  if (typeof v !== 'string' || v.trim() === '' || v.length > (opts.max ?? 10_000)) throw bad(`${name} must be a non-empty string${opts.max ? ` of at most ${opts.max} characters` : ''}`);
  return v;
}

function int(p: Record<string, unknown>, name: string, min: number, max: number): number | undefined {
  const v = p[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw bad(`${name} must be an integer from ${min} to ${max}`);
  return v;
}

/** Runs a route's body schema the way the HTTP host does (same Ajv options, same messages). */
function schemaCheck(schema: unknown, body: unknown): unknown {
  const copy = structuredClone(body);
  const validate = validatorCompiler({ schema: schema as never, httpPart: 'body', method: 'POST', url: '' }) as unknown as {
    (data: unknown): boolean; errors?: Parameters<typeof schemaErrorFormatter>[0] | null;
  };
  if (!validate(copy)) throw schemaErrorFormatter(validate.errors ?? [], 'body');
  return copy;
}
const locationCreateCheck = (b: unknown) => schemaCheck(LocationCreateBody, b) as CreateLocationInput;
const locationPatchCheck = (b: unknown) => schemaCheck(LocationPatchBody, b ?? {}) as PatchLocationInput;

/** Plain JSON out: the same shape the HTTP API serialises (dates as RFC 3339 strings). */
const json = <T>(v: T): Record<string, unknown> => JSON.parse(JSON.stringify(v)) as Record<string, unknown>;

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** The agent id kept in data_dir: one engine installation, one agent, across restarts. */
function agentIdOf(dataDir: string): string {
  const file = path.join(dataDir, AGENT_FILE);
  try {
    const v = fs.readFileSync(file, 'utf8').trim();
    if (v) return v;
  } catch {
    // first start
  }
  const id = `agent-${crypto.randomUUID()}`;
  fs.writeFileSync(file, id + '\n', { mode: 0o600 });
  return id;
}

export function createEngine(opts: EngineOptions = {}) {
  const clock = opts.clock ?? systemClock;
  const log: FastifyBaseLogger = opts.log ?? (pino({ level: process.env.LOG_LEVEL || 'warn' }, pino.destination(2)) as unknown as FastifyBaseLogger);
  let session: Session | null = null;
  /** init, queue_init and shutdown run one at a time; other calls wait for the one under way. */
  let lifecycle: Promise<unknown> = Promise.resolve();
  const inFlight = new Set<Promise<unknown>>();

  const need = (): Session => {
    if (!session) throw new EngineError('not_initialized', 'the engine is not initialised: call init first');
    return session;
  };
  /**
   * A session whose token is still valid, for what fiscalizes (a location, a sale, a
   * cancellation): the token is the engine's licence, checked at every such call, not only
   * at init (a POS that never restarts must stop too). Reads, the queue and telemetry go on:
   * what was signed before is still sent.
   */
  const licensed = (): Session => {
    const s = need();
    if (clock.now().getTime() >= s.tokenExpiresAt.getTime()) {
      throw new EngineError('token_expired', 'the offline token has expired: connect to the service and call init again');
    }
    return s;
  };

  function buildRuntime(o: Session['runtimeOptions'], queue: QueueSettings): Runtime {
    return createRuntime({
      ...o,
      config: {
        ...o.config,
        submissionMaxAttempts: queue.retry_max,
        backoff: { ...EMBEDDED_BACKOFF, baseMs: queue.retry_delay_seconds * 1000 },
      },
    });
  }

  /**
   * The worker only: no recurring jobs (batch processors' cron, certificate-expiry scan,
   * e-mail outbox). Embedded-Local has "no scheduler" (spec Deployment modes): the
   * integrator calls `process_pending`, as the local host's integrator calls
   * POST /v1/admin/process-pending.
   */
  async function startRuntime(s: Session): Promise<void> {
    if (opts.startWorker === false) return;
    s.rt.worker.start();
  }

  async function stopRuntime(rt: Runtime): Promise<void> {
    // After the calls in flight settled: the systems journal the stop (France's JET).
    await rt.transactions.stop();
    await rt.worker.stop();
    rt.changes.close();
    rt.mailer.close();
  }

  async function close(s: Session): Promise<void> {
    if (s.timer) clearInterval(s.timer);
    await Promise.allSettled([...inFlight]);
    await stopRuntime(s.rt);
    await s.limiter.close();
    await s.db.close();
    s.runtimeOptions.signingDevice?.close();
    s.unlock();
  }

  async function init(p: Record<string, unknown>): Promise<Record<string, unknown>> {
    const apiKey = str(p, 'api_key')!;
    const environment = str(p, 'environment')!;
    if (environment !== 'sandbox' && environment !== 'production') throw bad('environment must be "sandbox" or "production"');
    const country = str(p, 'country')!.toUpperCase();
    if (!(COUNTRIES as readonly string[]).includes(country)) throw bad(TOKEN_ERRORS.unknownCountry);
    const serviceUrl = str(p, 'service_url')!;
    let url: URL;
    try {
      url = new URL(serviceUrl);
    } catch {
      throw bad('service_url must be an http or https URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw bad('service_url must be an http or https URL');
    const dataDir = path.resolve(str(p, 'data_dir')!);
    const authority = str(p, 'authority', { optional: true }) ?? 'stub';
    if (authority !== 'stub' && authority !== 'sandbox') throw bad('authority must be "stub" or "sandbox"');
    const baseUrls = p.authority_base_urls;
    if (baseUrls !== undefined && (!isObj(baseUrls) || Object.values(baseUrls).some((v) => typeof v !== 'string'))) {
      throw bad('authority_base_urls must be an object of "<system>:<test|live>" to URL strings');
    }
    const authorityCa = str(p, 'authority_ca', { optional: true });
    const interval = int(p, 'telemetry_interval_seconds', 0, 86_400) ?? DEFAULT_TELEMETRY_SECONDS;
    // HardwareDevice mode (docs/hardware-device.md): `signing_device` names a PKCS#11 token
    // whose keys sign every locally signed record; checked for shape now, opened below.
    let deviceOptions: SigningDeviceOptions | undefined;
    if (p.signing_device !== undefined) {
      try {
        deviceOptions = signingDeviceOptionsFromParams(p.signing_device);
      } catch (err) {
        if (err instanceof SigningDeviceError) throw bad(`signing_device${err.field === 'device' ? '' : `.${err.field}`}: ${err.message}`);
        throw err;
      }
    }
    // Spec Authentication §6: the prefix must match the environment, before any network call.
    const prefix = ENGINE_ENVIRONMENTS[environment] === 'test' ? 'svc_test_' : 'svc_live_';
    if (!apiKey.startsWith(prefix)) throw new EngineError('environment_mismatch', TOKEN_ERRORS.environmentMismatch(environment));

    try {
      fs.mkdirSync(dataDir, { recursive: true });
    } catch (err) {
      throw new EngineError('store_error', `data_dir cannot be created: ${(err as Error).message}`);
    }
    const agentId = str(p, 'agent_id', { optional: true, max: 255 }) ?? agentIdOf(dataDir);

    // The token first: if the service refuses (or is unreachable without a usable cached
    // token), a running session stays as it was.
    const token = await obtainToken({ apiKey, environment, country, agentId, serviceUrl: url.toString().replace(/\/+$/, ''), dataDir }, clock);
    if (session) await shutdown(); // a second init replaces the first
    // One process per data directory (store/data-dir-lock.ts): two engines on one store lose
    // each other's acknowledged sales. Released by shutdown.
    let unlock: () => void;
    try {
      unlock = lockDataDir(dataDir);
    } catch (err) {
      if (err instanceof DataDirInUse) {
        throw new EngineError('store_error', `data_dir ${dataDir} is in use by another engine or local host (process ${err.pid ?? '?'}; lock file ${err.lockFile}): one process per data directory`);
      }
      throw new EngineError('store_error', `data_dir cannot be locked: ${(err as Error).message}`);
    }
    // Anything that fails from here leaves the directory unlocked again.
    try {
      // MASTER_KEY the way local mode keeps it: <data_dir>/master.key, generated once (config.ts);
      // the local queue's defaults from the spec's settings (Limits: FISCALIZATION_SUBMISSION_RETRY_MAX
      // "(engine)", FISCALIZATION_SUBMISSION_RETRY_DELAY), which queue_init overrides.
      let masterKey: Buffer;
      let queueDefaults: QueueSettings;
      try {
        const fromEnv = Object.fromEntries(ENGINE_ENV_SETTINGS.flatMap((k) => (process.env[k] ? [[k, process.env[k]]] : [])));
        const cfg = loadConfig({ ...fromEnv, DATA_DIR: dataDir }, 'local');
        masterKey = cfg.masterKey;
        queueDefaults = { retry_max: cfg.submissionMaxAttempts, retry_delay_seconds: cfg.submissionRetryBaseMs / 1000 };
      } catch (err) {
        throw new EngineError('store_error', err instanceof ConfigError ? err.message : `master key: ${(err as Error).message}`);
      }
      const keys = deriveKeys(masterKey);
      let db: Db;
      try {
        db = await openDb({ dataDir: path.join(dataDir, STORE_DIR) });
      } catch (err) {
        throw new EngineError('store_error', `the embedded store in ${dataDir} cannot be opened: ${(err as Error).message}`);
      }
      const limiter = createMemoryLimiter();
      let signingDevice: SigningDevice | undefined;
      try {
        if (deviceOptions) {
          try {
            signingDevice = openSigningDevice(deviceOptions);
          } catch (err) {
            if (err instanceof SigningDeviceError) throw new EngineError('signing_device_error', `signing_device.${err.field}: ${err.message}`);
            throw err;
          }
        }
        try {
          await migrate(db);
          await checkMasterKey(db, keys);
        } catch (err) {
          throw new EngineError('store_error', `the embedded store in ${dataDir} cannot be used: ${(err as Error).message}`);
        }
        const accountId = token.claims.account_id;
        // The token's account, mirrored: the engine's locations and transactions belong to it.
        const now = clock.now();
        await accountsRepo.ensureMirror(db, accountId, `engine ${agentId}`, `engine+${accountId}@embedded.invalid`, now);
        const queue: QueueSettings = { ...queueDefaults, ...readJson<QueueSettings>(path.join(dataDir, QUEUE_FILE)) };
        const live = environment === 'production';
        const runtimeOptions: Session['runtimeOptions'] = {
          db, clock, keys, limiter, log,
          config: {
            liveEnabled: live, mode: 'local', webhookAllowInsecure: true,
            authorityBaseUrls: (baseUrls as Record<string, string> | undefined) ?? {},
            authorityCa,
          },
          software: { ...DEFAULT_SOFTWARE },
          ...(signingDevice ? { signingDevice } : {}),
          ...(opts.worker ? { worker: opts.worker } : {}),
          ...(opts.random ? { random: opts.random } : {}),
        };
        const rt = buildRuntime(runtimeOptions, queue);
        const auth: AuthContext = {
          accountId, keyId: token.claims.key_id, environment: ENGINE_ENVIRONMENTS[environment],
          // The token grants its one country (offline-tokens.ts `countries`), nothing more.
          permissions: [...ACTION_PERMISSIONS, `country:${country}`], accountStatus: 'active',
        };
        const telemetry = createTelemetry({
          db, clock, log, dataDir, accountId, environment: auth.environment, serviceUrl: url.toString().replace(/\/+$/, ''), agentId, apiKey,
        });
        const s: Session = {
          db, rt, limiter, auth, telemetry, timer: undefined, dataDir, country, environment, agentId, unlock, tokenExpiresAt: token.expiresAt,
          sandbox: environment === 'sandbox' && authority === 'sandbox' ? 'authority' : undefined, runtimeOptions, queue,
        };
        await startRuntime(s);
        if (interval > 0) {
          s.timer = setInterval(() => void report(s).catch((err) => log.warn({ err }, 'telemetry round failed')), interval * 1000);
          s.timer.unref();
        }
        session = s;
        return {
          agent_id: agentId, account_id: accountId, environment, country,
          token_expires_at: token.expiresAt.toISOString(), offline: token.offline,
        };
      } catch (err) {
        signingDevice?.close();
        await limiter.close().catch(() => {});
        await db.close().catch(() => {});
        throw err;
      }
    } catch (err) {
      unlock();
      throw err;
    }
  }

  /** A telemetry round: a data point with the queue's state and alerts, then a flush. */
  async function report(s: Session): Promise<number> {
    await s.telemetry.collect(await queueStatus(s.db, clock, s.auth));
    return s.telemetry.flush();
  }

  async function shutdown(): Promise<Record<string, unknown>> {
    const s = session;
    session = null;
    if (s) await close(s);
    return { shutdown: true };
  }

  async function queueInit(p: Record<string, unknown>): Promise<Record<string, unknown>> {
    const s = need();
    const retryMax = int(p, 'retry_max', 1, 10_000);
    const delay = int(p, 'retry_delay_seconds', 1, 86_400);
    const queue: QueueSettings = { retry_max: retryMax ?? s.queue.retry_max, retry_delay_seconds: delay ?? s.queue.retry_delay_seconds };
    fs.writeFileSync(path.join(s.dataDir, QUEUE_FILE), JSON.stringify(queue));
    // The attempts and backoff are wired into the runtime's services: a new runtime takes them.
    await Promise.allSettled([...inFlight]);
    await stopRuntime(s.rt);
    s.rt = buildRuntime(s.runtimeOptions, queue);
    s.queue = queue;
    await startRuntime(s);
    return { ...queue, backoff_cap_seconds: EMBEDDED_BACKOFF.capMs / 1000 };
  }

  const methods: Record<string, (p: Record<string, unknown>) => Promise<Record<string, unknown>>> = {
    async create_location(p) {
      const s = licensed();
      return json(await s.rt.locations.create(s.auth, locationCreateCheck(p)));
    },
    async update_location(p) {
      const s = licensed();
      const id = str(p, 'id')!;
      const { id: _id, ...body } = p;
      return json(await s.rt.locations.patch(s.auth, id, locationPatchCheck(body)));
    },
    async get_location(p) {
      const s = need();
      return json(await s.rt.locations.get(s.auth, str(p, 'id')!));
    },
    async process_transaction(p) {
      const s = licensed();
      const { idempotency_key, inline_timeout_seconds, ...body } = p;
      // The params' own names and code (the core's messages name the HTTP headers they stand for).
      if (idempotency_key !== undefined && (typeof idempotency_key !== 'string' || idempotency_key.length < 1 || idempotency_key.length > 255)) {
        throw bad('idempotency_key must be a string of 1-255 characters');
      }
      if (typeof idempotency_key === 'string' && idempotency_key.startsWith('cancel:')) {
        throw bad('idempotency_key may not start with "cancel:": the engine keys cancellations so');
      }
      if (inline_timeout_seconds !== undefined
        && (typeof inline_timeout_seconds !== 'number' || !Number.isFinite(inline_timeout_seconds) || inline_timeout_seconds < 0 || inline_timeout_seconds > 10)) {
        throw bad('inline_timeout_seconds must be a number from 0 to 10');
      }
      const { transaction } = await s.rt.transactions.create(s.auth, body, {
        idempotencyKey: idempotency_key, timeout: inline_timeout_seconds === undefined ? undefined : String(inline_timeout_seconds), sandbox: s.sandbox,
      });
      return json(transaction);
    },
    async get_transaction(p) {
      const s = need();
      return json(await s.rt.transactions.get(s.auth, str(p, 'id')!));
    },
    /** The fiscal document exactly as signed or sent (GET /v1/transactions/{id}/fiscal-record). */
    async get_fiscal_record(p) {
      const s = need();
      const r = await s.rt.transactions.fiscalRecord(s.auth, str(p, 'id')!);
      return { content_type: r.content_type, body: r.body, placeholder: r.placeholder, seq: Number(r.seq) };
    },
    async cancel_transaction(p) {
      const s = licensed();
      const reason = p.reason;
      if (reason !== undefined && (typeof reason !== 'string' || reason.length > 500)) throw bad('reason must be a string of at most 500 characters');
      const { transaction } = await s.rt.transactions.cancel(s.auth, str(p, 'id')!, reason as string | undefined, p.sandbox_outcome);
      return json(transaction);
    },
    async process_pending(p) {
      const s = need();
      if (p.catch_up !== undefined && typeof p.catch_up !== 'boolean') throw bad('catch_up must be a boolean');
      // The due entries; with `catch_up`, what the local host's POST /v1/admin/process-pending
      // does: the retries waiting for their backoff are made due now first (after an outage,
      // to send at once; each attempt still counts towards retry_max).
      const { jobsRun: jobs, broughtForward } = p.catch_up === true
        ? await catchUpQueue(s.rt, s.auth.accountId)
        : { jobsRun: await s.rt.worker.drain(), broughtForward: 0 };
      // Only where the token's country has a batch processor (a GR-only token has none to run).
      const batch = s.rt.batch.processors.some((b) => b.country === s.country) ? await s.rt.batch.processPending(s.auth) : [];
      const sent = await report(s).catch((err) => {
        log.warn({ err }, 'telemetry round failed');
        return 0;
      });
      return json({ jobs_run: jobs, brought_forward: broughtForward, batch, telemetry_sent: sent, queue: await queueStatus(s.db, clock, s.auth) });
    },
    /**
     * The issuer's PKCS#12 into the local store (POST /v1/certificates' service): the systems
     * that sign with a certificate (TicketBAI, VERI*FACTU and SII over mutual TLS, Italy's
     * XAdES) need one to reach the real authority (`authority: "sandbox"`, or live).
     * `certificate` is the file in base64; the answers and 400/409 messages are the API's.
     */
    async upload_certificate(p) {
      const s = need();
      const b64 = str(p, 'certificate', { optional: true, max: 14_000_000 });
      if (b64 !== undefined && !/^[A-Za-z0-9+/\r\n]*={0,2}\s*$/.test(b64)) throw bad('certificate must be the PKCS#12 file in base64');
      const file = b64 === undefined ? undefined : Buffer.from(b64, 'base64');
      const password = typeof p.password === 'string' ? p.password : undefined;
      const certificateId = typeof p.certificate_id === 'string' ? p.certificate_id : undefined;
      return json(await s.rt.certificates.upload(s.auth, { file, password, certificateId }));
    },
    async list_certificates() {
      const s = need();
      return json(await s.rt.certificates.list(s.auth));
    },
    /** A telemetry round now (process_pending and the timer do one too): a data point kept, then the outbox sent if the service answers. */
    async send_telemetry() {
      const s = need();
      const sent = await report(s);
      return json({ sent, outbox: await s.telemetry.outbox() });
    },
    async queue_status() {
      const s = need();
      const status = await queueStatus(s.db, clock, s.auth);
      return json({ ...status, retry_max: s.queue.retry_max, telemetry_outbox: await s.telemetry.outbox() });
    },
  };

  /**
   * Params given as an object hold what the JSON form could hold: at most MAX_JSON_DEPTH
   * levels (the string form's rule, `invalid_request`), no cycle, no BigInt, function or
   * symbol (`invalid_params`). They reached the core and failed there as `internal_error`.
   * Strings are held to the HTTP body's rules (`validation_error` with its messages).
   */
  function checkPlainJson(root: Record<string, unknown>): void {
    const onPath = new Set<object>();
    // The strings the HTTP body parser refuses (NUL, XML-forbidden controls, a lone
    // surrogate), with its messages: the same core behind both doors (core/body-strings.ts).
    const checkString = (s: string) => {
      const fault = stringFault(s);
      if (fault !== null) throw new EngineError('validation_error', fault);
    };
    const walk = (v: unknown, depth: number): void => {
      if (typeof v === 'string') return checkString(v);
      if (v === null || typeof v === 'number' || typeof v === 'boolean' || v === undefined) return;
      if (typeof v !== 'object') throw new EngineError('invalid_params', `params must hold JSON values only (found a ${typeof v})`);
      if (depth > MAX_JSON_DEPTH) throw new EngineError('invalid_request', TOO_DEEP_BODY);
      if (onPath.has(v)) throw new EngineError('invalid_params', 'params must hold JSON values only (found a cycle)');
      onPath.add(v);
      if (!Array.isArray(v)) for (const k of Object.keys(v)) checkString(k);
      for (const child of Array.isArray(v) ? v : Object.values(v)) walk(child, depth + 1);
      onPath.delete(v);
    };
    walk(root, 2); // the envelope is the first level, as in the JSON form
  }

  /** One call: envelope object in, envelope object out. Never throws. */
  async function callObject(req: unknown): Promise<EngineResponse> {
    try {
      if (!isObj(req)) throw new EngineError('invalid_request', 'the request must be a JSON object {version, method, params}');
      if (req.version === undefined) throw new EngineError('invalid_request', 'version is required');
      if (req.version !== ENVELOPE_VERSION) throw new EngineError('unsupported_version', `unsupported envelope version ${JSON.stringify(req.version)}: this engine speaks version ${ENVELOPE_VERSION}`);
      if (typeof req.method !== 'string' || req.method === '') throw new EngineError('invalid_request', 'method is required');
      const params = req.params ?? {};
      if (!isObj(params)) throw new EngineError('invalid_params', 'params must be an object');
      checkPlainJson(params);
      const method = req.method;
      let result: Record<string, unknown>;
      if (method === 'init' || method === 'shutdown' || method === 'queue_init') {
        const run = lifecycle.then(() => (method === 'init' ? init(params) : method === 'shutdown' ? shutdown() : queueInit(params)));
        lifecycle = run.catch(() => {});
        result = await run;
      } else {
        const fn = Object.hasOwn(methods, method) ? methods[method] : undefined;
        if (!fn) throw new EngineError('unknown_method', `unknown method ${JSON.stringify(method)}`);
        await lifecycle;
        const run = fn(params);
        inFlight.add(run);
        try {
          result = await run;
        } finally {
          inFlight.delete(run);
        }
      }
      return { version: 1, result };
    } catch (err) {
      const e = toEngineError(err);
      if (e.code === 'internal_error' || e.code === 'store_error') log.error({ err }, 'engine call failed');
      return { version: 1, error: { code: e.code, message: e.message } };
    }
  }

  /** The envelope as the spec gives it: an object gives an object, a JSON string a JSON string. */
  function call(req: string): Promise<string>;
  function call(req: unknown): Promise<EngineResponse>;
  async function call(req: unknown): Promise<EngineResponse | string> {
    if (typeof req !== 'string') return callObject(req);
    if (nestsDeeperThan(req)) return JSON.stringify({ version: 1, error: { code: 'invalid_request', message: TOO_DEEP_BODY } });
    let parsed: unknown;
    try {
      parsed = JSON.parse(req);
    } catch {
      return JSON.stringify({ version: 1, error: { code: 'invalid_request', message: 'the request is not valid JSON' } });
    }
    return JSON.stringify(await callObject(parsed));
  }

  return {
    call,
    /** Whether init has succeeded and shutdown has not run (hosts use it to exit cleanly). */
    get initialized() {
      return session !== null;
    },
  };
}

export type Engine = ReturnType<typeof createEngine>;
