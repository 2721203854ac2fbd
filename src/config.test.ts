import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.ts';
import { SYSTEM_KEYS } from './countries/registry.ts';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'cfg-'));

describe('loadConfig', () => {
  it('defaults: 127.0.0.1:3000, ./data-style DATA_DIR, embedded store, live mode off', () => {
    const dir = tmp();
    const c = loadConfig({ DATA_DIR: dir });
    expect(c).toMatchObject({ host: '127.0.0.1', port: 3000, dataDir: dir, databaseUrl: undefined, redisUrl: undefined, liveEnabled: false, webhookAllowInsecure: false });
    expect(c.masterKeySource).toBe('generated');
    // The generated key is kept and reused.
    expect(fs.statSync(path.join(dir, 'master.key')).mode & 0o777).toBe(0o600);
    const again = loadConfig({ DATA_DIR: dir });
    expect(again.masterKeySource).toBe('file');
    expect(again.masterKey.equals(c.masterKey)).toBe(true);
  });

  it('local mode listens on 8080 and allows insecure webhooks by default', () => {
    expect(loadConfig({ DATA_DIR: tmp() }, 'local')).toMatchObject({ port: 8080, webhookAllowInsecure: true });
  });

  it('reads MASTER_KEY as base64 or hex', () => {
    const hex = 'ab'.repeat(32);
    expect(loadConfig({ DATA_DIR: tmp(), MASTER_KEY: hex }).masterKey.toString('hex')).toBe(hex);
    const b64 = Buffer.alloc(32, 3).toString('base64');
    expect(loadConfig({ DATA_DIR: tmp(), MASTER_KEY: b64 }).masterKeySource).toBe('env');
  });

  it.each([
    [{ PORT: 'eighty' }, /PORT must be an integer/],
    [{ PORT: '70000' }, /PORT must be an integer from 0 to 65535/],
    [{ FISCALIZATION_LIVE_ENABLED: 'maybe' }, /FISCALIZATION_LIVE_ENABLED must be true or false/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL must be a postgres: or postgresql: URL/],
    [{ DATABASE_URL: 'not a url' }, /DATABASE_URL is not a valid URL/],
    [{ REDIS_URL: 'http://x' }, /REDIS_URL must be a redis: or rediss: URL/],
    [{ MASTER_KEY: 'short' }, /MASTER_KEY must be 32 random bytes/],
  ])('a bad setting stops start-up naming it: %o', (env, message) => {
    expect(() => loadConfig({ DATA_DIR: tmp(), ...env })).toThrow(ConfigError);
    expect(() => loadConfig({ DATA_DIR: tmp(), ...env })).toThrow(message);
  });

  it('reads authority base URLs per system and environment, and a CA file', () => {
    const dir = tmp();
    const ca = path.join(dir, 'ca.pem');
    fs.writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    const c = loadConfig({
      DATA_DIR: dir,
      AUTHORITY_URL_ES_VERIFACTU_TEST: 'https://127.0.0.1:8443/',
      AUTHORITY_URL_ES_TICKETBAI_LIVE: 'https://proxy.example',
      AUTHORITY_CA_FILE: ca,
    });
    expect(c.authorityBaseUrls).toEqual({ 'es-verifactu:test': 'https://127.0.0.1:8443', 'es-ticketbai:live': 'https://proxy.example' });
    expect(c.authorityCa).toContain('BEGIN CERTIFICATE');
    // The host passes the system keys (config.ts knows no plug-in); a name outside them stops start-up.
    expect(() => loadConfig({ DATA_DIR: tmp(), AUTHORITY_URL_ES_NOPE_TEST: 'https://x' }, 'cloud', SYSTEM_KEYS)).toThrow(/AUTHORITY_URL_ES_NOPE_TEST: unknown system "es-nope"/);
    expect(loadConfig({ DATA_DIR: tmp(), AUTHORITY_URL_ES_NOPE_TEST: 'https://x' }).authorityBaseUrls).toEqual({ 'es-nope:test': 'https://x' }); // no list: read as named
    expect(() => loadConfig({ DATA_DIR: tmp(), AUTHORITY_URL_ES_SII_TEST: 'ftp://x' })).toThrow(ConfigError);
    expect(() => loadConfig({ DATA_DIR: tmp(), AUTHORITY_CA_FILE: path.join(dir, 'missing.pem') })).toThrow(/AUTHORITY_CA_FILE: cannot read/);
  });

  it('reads each inbound channel secret (<CHANNEL>_INBOUND_SECRET), refusing a short one', () => {
    expect(loadConfig({ DATA_DIR: tmp() }).inboundSecrets).toEqual({});
    expect(loadConfig({ DATA_DIR: tmp(), SDI_INBOUND_SECRET: 'a-long-enough-secret' }).inboundSecrets).toEqual({ sdi: 'a-long-enough-secret' });
    expect(() => loadConfig({ DATA_DIR: tmp(), SDI_INBOUND_SECRET: 'short' })).toThrow(new ConfigError('SDI_INBOUND_SECRET must be at least 16 characters'));
  });

  it('reads the billing webhook secret and the SMTP settings, refusing a non-SMTP URL', () => {
    const none = loadConfig({ DATA_DIR: tmp() });
    expect([none.billingWebhookSecret, none.smtpUrl, none.smtpFrom]).toEqual([undefined, undefined, undefined]);
    const set = loadConfig({ DATA_DIR: tmp(), BILLING_WEBHOOK_SECRET: 'whsec_abc', SMTP_URL: 'smtp://u:p@127.0.0.1:2525', SMTP_FROM: 'Billing <billing@example.com>' });
    expect([set.billingWebhookSecret, set.smtpUrl, set.smtpFrom]).toEqual(['whsec_abc', 'smtp://u:p@127.0.0.1:2525', 'Billing <billing@example.com>']);
    expect(() => loadConfig({ DATA_DIR: tmp(), SMTP_URL: 'http://mail' })).toThrow(new ConfigError('SMTP_URL must be a smtp: or smtps: URL'));
  });

  it('reads each inbound channel trust anchors (<CHANNEL>_NOTIFICATION_CA_FILE), refusing a missing or non-PEM file', () => {
    const dir = tmp();
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    fs.writeFileSync(path.join(dir, 'sdi-ca.pem'), pem);
    fs.writeFileSync(path.join(dir, 'not.pem'), 'hello');
    expect(loadConfig({ DATA_DIR: tmp() }).inboundCa).toEqual({});
    expect(loadConfig({ DATA_DIR: tmp(), SDI_NOTIFICATION_CA_FILE: path.join(dir, 'sdi-ca.pem') }).inboundCa).toEqual({ sdi: pem });
    expect(() => loadConfig({ DATA_DIR: tmp(), SDI_NOTIFICATION_CA_FILE: path.join(dir, 'missing.pem') })).toThrow(/^SDI_NOTIFICATION_CA_FILE: cannot read/);
    expect(() => loadConfig({ DATA_DIR: tmp(), SDI_NOTIFICATION_CA_FILE: path.join(dir, 'not.pem') })).toThrow(new ConfigError('SDI_NOTIFICATION_CA_FILE must hold PEM certificates'));
  });

  it('live mode needs the software producer NIF', () => {
    expect(() => loadConfig({ DATA_DIR: tmp(), FISCALIZATION_LIVE_ENABLED: 'true' })).toThrow('SOFTWARE_VENDOR_NIF is required when live mode is enabled (FISCALIZATION_LIVE_ENABLED or LIVE_MODE)');
    expect(loadConfig({ DATA_DIR: tmp(), FISCALIZATION_LIVE_ENABLED: 'true', SOFTWARE_VENDOR_NIF: 'B12345674' }).softwareVendorNif).toBe('B12345674');
    // The spec's server setting `live_mode` (as LIVE_MODE or live_mode) enables live mode too.
    expect(loadConfig({ DATA_DIR: tmp() }).liveEnabled).toBe(false);
    expect(loadConfig({ DATA_DIR: tmp(), LIVE_MODE: 'true', SOFTWARE_VENDOR_NIF: 'B12345674' }).liveEnabled).toBe(true);
    expect(loadConfig({ DATA_DIR: tmp(), live_mode: 'on', SOFTWARE_VENDOR_NIF: 'B12345674' }).liveEnabled).toBe(true);
    expect(loadConfig({ DATA_DIR: tmp(), LIVE_MODE: 'false', FISCALIZATION_LIVE_ENABLED: 'true', SOFTWARE_VENDOR_NIF: 'B12345674' }).liveEnabled).toBe(true);
    expect(() => loadConfig({ DATA_DIR: tmp(), LIVE_MODE: 'true' })).toThrow('SOFTWARE_VENDOR_NIF is required');
    expect(() => loadConfig({ DATA_DIR: tmp(), LIVE_MODE: 'sometimes' })).toThrow('LIVE_MODE must be true or false');
  });

  it('billing provider: embedded without STRIPE_API_KEY; the Stripe one with it (address and product overridable)', () => {
    expect(loadConfig({ DATA_DIR: tmp() }).billingProvider).toBeUndefined();
    expect(loadConfig({ DATA_DIR: tmp(), STRIPE_API_KEY: 'sk_test_1' }).billingProvider).toEqual({ apiKey: 'sk_test_1', apiBaseUrl: undefined, productId: undefined });
    expect(loadConfig({ DATA_DIR: tmp(), STRIPE_API_KEY: 'sk_test_1', STRIPE_API_BASE_URL: 'http://127.0.0.1:12111', STRIPE_PRODUCT_ID: 'prod_1' }).billingProvider)
      .toEqual({ apiKey: 'sk_test_1', apiBaseUrl: 'http://127.0.0.1:12111', productId: 'prod_1' });
    expect(() => loadConfig({ DATA_DIR: tmp(), STRIPE_API_KEY: 'sk_test_1', STRIPE_API_BASE_URL: 'ftp://x' })).toThrow('STRIPE_API_BASE_URL must be a https: or http: URL');
    expect(() => loadConfig({ DATA_DIR: tmp(), STRIPE_API_BASE_URL: 'http://127.0.0.1:1' })).toThrow('STRIPE_API_BASE_URL is set but STRIPE_API_KEY is not');
  });

  it('reads each software producer key (<CC>_SOFTWARE_KEY_FILE, _VERSION, _CERTIFICATE_NUMBER), refusing a bad one', () => {
    const dir = tmp();
    const file = path.join(dir, 'producer.pem');
    const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 1024 });
    fs.writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }));
    expect(loadConfig({ DATA_DIR: tmp() }).producerKeys).toEqual({});
    const c = loadConfig({ DATA_DIR: tmp(), PT_SOFTWARE_KEY_FILE: file, PT_SOFTWARE_KEY_VERSION: '2', PT_SOFTWARE_CERTIFICATE_NUMBER: '1234' });
    expect(Object.keys(c.producerKeys)).toEqual(['PT']);
    expect(c.producerKeys.PT).toMatchObject({ version: '2', certificateNumber: '1234' });
    expect(crypto.createPublicKey(c.producerKeys.PT!.privateKey).export({ type: 'spki', format: 'der' }).equals(publicKey.export({ type: 'spki', format: 'der' }))).toBe(true);
    // The version defaults to 1; no certificate number until certified.
    const d = loadConfig({ DATA_DIR: tmp(), PT_SOFTWARE_KEY_FILE: file });
    expect(d.producerKeys.PT?.version).toBe('1');
    expect(d.producerKeys.PT?.certificateNumber).toBeUndefined();
    expect(() => loadConfig({ DATA_DIR: tmp(), PT_SOFTWARE_KEY_FILE: path.join(dir, 'missing.pem') })).toThrow(/PT_SOFTWARE_KEY_FILE: cannot read/);
    fs.writeFileSync(path.join(dir, 'bad.pem'), 'not a key');
    expect(() => loadConfig({ DATA_DIR: tmp(), PT_SOFTWARE_KEY_FILE: path.join(dir, 'bad.pem') })).toThrow(/PT_SOFTWARE_KEY_FILE must hold an unencrypted PEM private key/);
    expect(() => loadConfig({ DATA_DIR: tmp(), PT_SOFTWARE_KEY_FILE: file, PT_SOFTWARE_KEY_VERSION: 'v2' })).toThrow(ConfigError);
    expect(() => loadConfig({ DATA_DIR: tmp(), PT_SOFTWARE_KEY_FILE: file, PT_SOFTWARE_CERTIFICATE_NUMBER: '12/AT' })).toThrow(/PT_SOFTWARE_CERTIFICATE_NUMBER must contain only digits/);
  });

  it('METRICS_TOKEN: unset by default; at least 16 characters, no spaces', () => {
    expect(loadConfig({ DATA_DIR: tmp() }).metricsToken).toBeUndefined();
    expect(loadConfig({ DATA_DIR: tmp(), METRICS_TOKEN: 'abcdefghijklmnop' }).metricsToken).toBe('abcdefghijklmnop');
    expect(() => loadConfig({ DATA_DIR: tmp(), METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN must be at least 16 characters/);
    expect(() => loadConfig({ DATA_DIR: tmp(), METRICS_TOKEN: 'abcdefgh ijklmnopq' })).toThrow(ConfigError);
  });

  it('PostgreSQL statement bounds: 30 s for API statements, 1 h for long work (0: none); a bad value names the setting', () => {
    expect(loadConfig({ DATA_DIR: tmp() })).toMatchObject({ databaseStatementTimeoutMs: 30_000, databaseLongStatementTimeoutMs: 3_600_000 });
    expect(loadConfig({ DATA_DIR: tmp(), DATABASE_STATEMENT_TIMEOUT_MS: '5000', DATABASE_LONG_STATEMENT_TIMEOUT_MS: '0' }))
      .toMatchObject({ databaseStatementTimeoutMs: 5_000, databaseLongStatementTimeoutMs: 0 });
    // The API bound has no "none": a request must never hang on the database.
    for (const v of ['0', '99', '3600001', '1.5', 'soon']) {
      expect(() => loadConfig({ DATA_DIR: tmp(), DATABASE_STATEMENT_TIMEOUT_MS: v }), v).toThrow(`DATABASE_STATEMENT_TIMEOUT_MS must be an integer from 100 to 3600000 (got "${v}")`);
    }
    for (const v of ['500', '-1', '604800001', 'never']) {
      expect(() => loadConfig({ DATA_DIR: tmp(), DATABASE_LONG_STATEMENT_TIMEOUT_MS: v }), v).toThrow(`DATABASE_LONG_STATEMENT_TIMEOUT_MS must be 0 (no bound) or an integer from 1000 to 604800000 (got "${v}")`);
    }
  });

  it('a transaction left idle: PostgreSQL ends it after 60 s by default (DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS, no "none"); a bad value names the setting', () => {
    expect(loadConfig({ DATA_DIR: tmp() }).databaseIdleInTransactionTimeoutMs).toBe(60_000);
    expect(loadConfig({ DATA_DIR: tmp(), DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '5000' }).databaseIdleInTransactionTimeoutMs).toBe(5_000);
    for (const v of ['0', '99', '3600001', '1.5', 'soon']) {
      expect(() => loadConfig({ DATA_DIR: tmp(), DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: v }), v)
        .toThrow(`DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS must be an integer from 100 to 3600000 (got "${v}")`);
    }
  });
});
