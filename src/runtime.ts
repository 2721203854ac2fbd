import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from './core/clock.ts';
import type { FiscalSystem, SoftwareIdentity } from './countries/types.ts';
import type { DerivedKeys } from './crypto/master-key.ts';
import { CLOUD_BACKOFF, type BackoffPolicy } from './jobs/backoff.ts';
import { createWorker, type JobHandler, type Worker } from './jobs/runner.ts';
import { createCorrectionSubmitHandler } from './jobs/tasks/submit-correction.ts';
import { createSubmitHandler } from './jobs/tasks/submit.ts';
import { createInboundMessageHandler } from './jobs/tasks/inbound-message.ts';
import { createDeliverWebhookHandler } from './jobs/tasks/deliver-webhook.ts';
import { createTranslateErrorHandler } from './jobs/tasks/translate-error.ts';
import { CERTIFICATE_EXPIRY_JOB, createCertificateExpiryHandler, scheduleCertificateExpiry } from './jobs/tasks/certificate-expiry.ts';
import type { RateLimiter } from './ratelimit/limiter.ts';
import type { Deps } from './services/deps.ts';
import { DELIVER_WEBHOOK, FAN_OUT_EVENTS, createEventPublisher } from './services/event-publisher.ts';
import { createFanOutEventsHandler } from './jobs/tasks/fan-out-events.ts';
import { createLedger } from './ledger/ledger.ts';
import type { Ledger } from './ledger/types.ts';
import { createInboundService, type InboundService } from './services/inbound.ts';
import { SYSTEMS } from './countries/registry.ts';
import { CORRECTION_JOB, INBOUND_MESSAGE_JOB, POLL_JOB, SUBMIT_JOB, TRANSLATE_JOB } from './services/transaction-view.ts';
import type { EventPublisher } from './services/events.ts';
import { createCertificateService, type CertificateService } from './services/certificates.ts';
import { createSigningKeyService, type SigningKeyService } from './services/signing-keys.ts';
import { createAuthorityPacing } from './services/authority-pacing.ts';
import { createTransactionService, type TransactionService } from './services/transactions.ts';
import { createLocationService, type LocationService } from './services/locations.ts';
import { createLocationFileService, type LocationFileService } from './services/location-files.ts';
import type { Submitter } from './services/transactions.ts';
import type { Db } from './store/db.ts';
import { createChangeFeed, type ChangeFeed } from './store/change-feed.ts';
import { createBatch, createBatchJobHandlers, scheduleBatchJobs, type BatchOptions, type BatchService } from './batch/index.ts';
import { createTranslator, type Translator } from './translations/service.ts';
import { createAccountTiers, type AccountTiers } from './services/account-tiers.ts';
import { createEmbeddedBillingProvider, type BillingProvider } from './billing/provider.ts';
import { createStripeBillingProvider } from './billing/stripe-provider.ts';
import type { BillingProviderConfig, SigningDeviceConfig } from './config.ts';
import { createMailer, type Mailer } from './email/mailer.ts';
import { EMAIL_OUTBOX_JOB, createEmailOutboxHandler, scheduleEmailOutbox } from './jobs/tasks/email-outbox.ts';
import { createBillingReceiver, type BillingReceiver } from './billing/receiver.ts';
import { pricesFor, type PriceList } from './billing/pricing.ts';
import { FLOOR_REQUOTE_JOB, createFloorRequoteHandler, enqueueFloorRequote } from './billing/floor-requote.ts';
import { createSubscriptionService } from './services/subscriptions.ts';
import type { SigningDevice } from './signing/pkcs11/device.ts';
import { withDeviceProducerKeys } from './signing/pkcs11/configured.ts';
import { createMetrics, type Metrics } from './metrics/metrics.ts';

/**
 * The service core, wired once: the pieces the HTTP host and the workers share
 * (event publisher, job handlers, worker). The hosts (`serve`, `worker`, tests) build
 * one runtime each from their configuration.
 */
export interface RuntimeOptions {
  db: Db;
  clock: Clock;
  keys: DerivedKeys;
  limiter: RateLimiter;
  log: FastifyBaseLogger;
  config: Deps['config'] & {
    submissionMaxAttempts?: number;
    backoff?: BackoffPolicy;
    authorityBaseUrls?: Record<string, string>;
    /** Extra CA certificates (PEM) trusted for authority servers (tests: the fake authorities). */
    authorityCa?: string | undefined;
    translationAi?: { url: string; key?: string | undefined; model: string; timeoutMs?: number } | undefined;
    webhookTimeoutMs?: number;
    /** Shared secrets of the inbound authority channels, by channel name (config.ts `inboundSecrets`). */
    inboundSecrets?: Record<string, string>;
    /** Trust anchors (PEM) of the inbound channels' signed messages, by channel name (config.ts `inboundCa`). */
    inboundCa?: Record<string, string>;
    /** Batch processors (src/batch): alert threshold (default 0.2), authority request timeout, claim lease. */
    batch?: BatchOptions;
    /** The real billing API (config.ts `billingProvider`); unset: the embedded provider (charges nothing). */
    billingProvider?: BillingProviderConfig | undefined;
    /** BILLING_WEBHOOK_SECRET (config.ts); unset: the billing receiver refuses every event. */
    billingWebhookSecret?: string | undefined;
    /** SMTP_URL and SMTP_FROM (config.ts); no URL: notification e-mail waits in the outbox. */
    smtpUrl?: string | undefined;
    smtpFrom?: string | undefined;
    /** SIGNING_DEVICE=pkcs11 (config.ts): here for the producer keys' versions and certificate numbers. */
    signingDevice?: SigningDeviceConfig | undefined;
    /** METRICS_TOKEN (config.ts): the bearer token `GET /metrics` asks for; unset, loopback clients only. */
    metricsToken?: string | undefined;
  };
  software?: SoftwareIdentity;
  /**
   * HardwareDevice mode: the opened PKCS#11 device (signing/pkcs11/device.ts) whose keys
   * sign instead of in-process ones, purpose by purpose; the host opens and closes it.
   */
  signingDevice?: SigningDevice | undefined;
  /** Worker tuning (tests shorten the lease). */
  worker?: { leaseMs?: number; idleMs?: number; batchSize?: number; concurrency?: number; workerId?: string };
  random?: () => number;
  /** The plug-in of a system key (default: the registry's). Tests wrap a system to give it hooks it lacks yet. */
  systems?: (key: string) => FiscalSystem;
  /** The Prometheus metrics (default: a registry of this runtime's own, src/metrics). */
  metrics?: Metrics;
}

/** Schedules the recurring jobs (idempotent): called by every host that runs workers. */
export async function scheduleRecurringJobs(rt: Runtime): Promise<void> {
  await scheduleCertificateExpiry(rt.deps.db, rt.deps.clock);
  await scheduleBatchJobs(rt.deps.db, rt.deps.clock, rt.batch.processors);
  await scheduleEmailOutbox(rt.deps.db, rt.deps.clock);
}

export interface Runtime {
  deps: Deps;
  changes: ChangeFeed;
  events: EventPublisher;
  locations: LocationService;
  certificates: CertificateService;
  signingKeys: SigningKeyService;
  transactions: TransactionService;
  inbound: InboundService;
  translator: Translator;
  batch: BatchService;
  /** The files inspectors ask for, as the plug-ins produce them (`FiscalSystem.locationFiles`). */
  locationFiles: LocationFileService;
  /** The one chain ledger (ledger/ledger.ts): what appends outside a create go through (a duplicate's JET event). */
  ledger: Ledger;
  /** Notification e-mail through the outbox (email/mailer.ts). */
  mailer: Mailer;
  /** The billing provider's events (billing/receiver.ts). */
  billingReceiver: BillingReceiver;
  handlers: Record<string, JobHandler>;
  worker: Worker;
  submitter: Submitter;
  software: SoftwareIdentity;
  maxAttempts: number;
  /** Each account's tier (its subscription's merchant count), cached and invalidated on every node. */
  tiers: AccountTiers;
  /** Subscription prices: the location floor only in HardwareDevice mode (billing/pricing.ts pricesFor). */
  prices: PriceList;
  /** Where subscriptions are charged (src/billing/provider.ts). */
  billing: BillingProvider;
  /** This runtime's Prometheus registry and the observers fed by the core (src/metrics). */
  metrics: Metrics;
  /** The token `GET /metrics` asks for (RuntimeOptions.config.metricsToken). */
  metricsToken: string | undefined;
}

/**
 * The software identity records carry when none is configured. The producer NIF defaults to
 * Batuz's published test software identity (`A99800005`, FORMATS §1.6), which the TicketBAI
 * test environments expect; live mode refuses to start without SOFTWARE_VENDOR_NIF (config.ts).
 */
export const DEFAULT_SOFTWARE: SoftwareIdentity = { name: 'Fiscalization API', version: '0.1.0', vendorTaxId: 'A99800005' };

export function createRuntime(o: RuntimeOptions): Runtime {
  const deps: Deps = { db: o.db, clock: o.clock, keys: o.keys, config: o.config, limiter: o.limiter, log: o.log };
  const metrics = o.metrics ?? createMetrics({ db: o.db, clock: o.clock, log: o.log });
  // Deliveries start as soon as they are committed, not after the worker's idle pause.
  let worker: Worker | undefined;
  const events = createEventPublisher(deps, { onEnqueued: () => worker?.notify() });
  // Row changes the request path's caches listen to (API keys, locations): store/change-feed.ts.
  const changes = createChangeFeed(o.db, o.log);
  const prices = pricesFor({ hardwareDevice: o.signingDevice !== undefined });
  // With a location floor, every change of an account's active locations re-quotes its subscription.
  const locations = createLocationService(deps, changes, {
    ...(prices.locationFloorMonthly > 0 ? { onActiveLocationsChanged: enqueueFloorRequote } : {}),
    // A system journals a change of its locations through the ledger (`onLocationChanged`): built below.
    changeDeps: () => ({ ledger, signingKeys: signingKeys!, software }),
  });
  const tiers = createAccountTiers(deps, changes);
  const bp = o.config.billingProvider;
  const billing = bp ? createStripeBillingProvider({ apiKey: bp.apiKey, apiBaseUrl: bp.apiBaseUrl, productId: bp.productId }) : createEmbeddedBillingProvider();
  const subscriptions = createSubscriptionService(deps, { provider: billing, tiers, prices });
  let signingKeys: SigningKeyService | undefined;
  const certificates = createCertificateService(deps, { onRemoved: (a, c) => signingKeys?.forget(a, c), onAdded: (a, c) => signingKeys?.forget(a, c) });
  signingKeys = createSigningKeyService(deps, certificates, o.signingDevice);
  const translator = createTranslator(deps, o.config.translationAi);
  // The authorities' waits (VERI*FACTU TiempoEsperaEnvio) live in the store: every worker sees them.
  const pacing = createAuthorityPacing(o.db, o.log);
  const software = withDeviceProducerKeys(o.software ?? DEFAULT_SOFTWARE, o.signingDevice, o.config.signingDevice?.producerInfo);
  const ledger = createLedger({ db: o.db, clock: o.clock, log: o.log, events });
  // The processors the fiscal systems contribute, all built from these deps (batch/types.ts ProcessorDeps).
  const batch = createBatch({
    db: o.db, clock: o.clock, log: o.log, events, ledger, locations, signingKeys, pacing, software,
    authorityBaseUrls: o.config.authorityBaseUrls, authorityCa: o.config.authorityCa,
    metrics: metrics.submissions, translations: translator,
  }, o.config.batch);
  // Before the handlers: the inbound_message jobs deliver the stub's notifications through it.
  const inbound = createInboundService({
    db: o.db, clock: o.clock, log: o.log, events, secrets: o.config.inboundSecrets ?? {}, trustedCa: o.config.inboundCa ?? {}, metrics: metrics.submissions, translations: translator,
    ...(o.systems ? { systems: SYSTEMS.map((s) => o.systems!(s.key)) } : {}),
  });
  const submitDeps = {
    db: o.db, clock: o.clock, log: o.log, events, locations, signingKeys, pacing, backoff: o.config.backoff ?? CLOUD_BACKOFF,
    authorityBaseUrls: o.config.authorityBaseUrls, authorityCa: o.config.authorityCa, ...(o.random ? { random: o.random } : {}),
    ...(o.systems ? { systems: o.systems } : {}),
    metrics: metrics.submissions,
    translations: translator,
    // The offline grace follows the account's tier (services/offline-grace.ts).
    tiers,
  };
  const submit = createSubmitHandler(submitDeps);
  const mailer = createMailer({ db: o.db, clock: o.clock, log: o.log, smtpUrl: o.config.smtpUrl, from: o.config.smtpFrom });
  const billingReceiver = createBillingReceiver({ db: o.db, clock: o.clock, log: o.log, mailer, secret: o.config.billingWebhookSecret });
  const handlers: Record<string, JobHandler> = {
    // One handler sends a record and, for a system with `poll`, fetches its result later.
    [SUBMIT_JOB]: submit,
    [POLL_JOB]: submit,
    // The record of a correction of an accepted transaction (services/corrections.ts).
    [CORRECTION_JOB]: createCorrectionSubmitHandler(submitDeps),
    [INBOUND_MESSAGE_JOB]: createInboundMessageHandler({ inbound, log: o.log }),
    [FAN_OUT_EVENTS]: createFanOutEventsHandler({ clock: o.clock, events }),
    [DELIVER_WEBHOOK]: createDeliverWebhookHandler({ ...deps, events, ...(o.config.webhookTimeoutMs ? { timeoutMs: o.config.webhookTimeoutMs } : {}), metrics: metrics.webhooks }),
    [TRANSLATE_JOB]: createTranslateErrorHandler({ ...deps, translator }),
    [CERTIFICATE_EXPIRY_JOB]: createCertificateExpiryHandler({ db: o.db, clock: o.clock, events }),
    [EMAIL_OUTBOX_JOB]: createEmailOutboxHandler({ clock: o.clock, mailer }),
    [FLOOR_REQUOTE_JOB]: createFloorRequoteHandler({ clock: o.clock, requoteFloor: subscriptions.requoteFloor, ...(o.random ? { random: o.random } : {}) }),
    ...createBatchJobHandlers({ clock: o.clock, batch }),
  };
  worker = createWorker({ db: o.db, clock: o.clock, log: o.log, handlers, ...o.worker });
  const w = worker;
  const submitter: Submitter = { runNow: (id) => w.runJobNow(id), notify: () => w.notify() };
  const maxAttempts = o.config.submissionMaxAttempts ?? 50;
  const transactions = createTransactionService({ ...deps, ledger, locations, submitter, software, maxAttempts, signingKeys, metrics: metrics.transactions });
  // The inspector's files are built from the stored records (a month's SAF-T, a year's
  // archive): long work, not cut by the API's statement bound (store/db.ts `longWork`).
  const locationFiles = createLocationFileService({
    db: o.db.longWork?.() ?? o.db, clock: o.clock, log: o.log, signingKeys, software, ledger, locations, systems: SYSTEMS,
  });
  return {
    transactions,
    ledger,
    inbound,
    locationFiles,
    mailer,
    billingReceiver,
    deps, changes, events, locations, certificates, signingKeys, translator, batch, handlers, worker: w, submitter,
    software,
    maxAttempts,
    tiers,
    /** Subscription prices: the location floor only in HardwareDevice mode (billing/pricing.ts). */
    prices,
    billing,
    metrics,
    metricsToken: o.config.metricsToken,
  };
}
