import type { Transporter } from 'nodemailer';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../core/clock.ts';
import { newId } from '../core/ids.ts';
import { lazyImport } from '../core/lazy-import.ts';
import type { Db, Queryable } from '../store/db.ts';
import { emailOutboxRepo } from '../store/repos/email-outbox-repo.ts';

/**
 * Notification e-mail (DECISIONS "Accounts, consents, subscriptions": SMTP through
 * nodemailer; with no SMTP configured it is stored in an outbox table). Every message is
 * written to `email_outbox` first, in the caller's transaction (the suspension and its
 * e-mail commit together), and sent afterwards: at once when SMTP_URL is set, else by the
 * outbox job on a node that has it. A failed send stays in the outbox and is tried again
 * with backoff, without end: a message is never dropped.
 */
export interface MailMessage {
  accountId: string | null;
  to: string;
  subject: string;
  text: string;
}

export interface MailerOptions {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  /** SMTP_URL (smtp:// or smtps://, credentials in the URL); undefined: messages wait in the outbox. */
  smtpUrl?: string | undefined;
  /** SMTP_FROM, the sender address. */
  from?: string | undefined;
}

export interface Mailer {
  readonly configured: boolean;
  /** Queues a message in the caller's transaction; returns its outbox id. */
  enqueue(tx: Queryable, m: MailMessage): Promise<string>;
  /** Sends due messages (or just `ids`); without SMTP sends nothing. */
  flush(opts?: { ids?: readonly string[]; limit?: number }): Promise<{ sent: number; failed: number }>;
  close(): void;
}

export const DEFAULT_FROM = 'Fiscalization API <no-reply@localhost>';
/** A claim outlives any send (nodemailer's own timeouts are shorter): a crashed sender's rows come back after it. */
const CLAIM_MS = 5 * 60_000;
const RETRY_BASE_MS = 60_000;
const RETRY_MAX_MS = 60 * 60_000;

export function retryDelayMs(attempts: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.min(attempts, 10));
}

export function createMailer(o: MailerOptions): Mailer {
  // Timeouts well inside the claim (nodemailer's own defaults reach 10 minutes), so a hung
  // server gives the row back as a failed attempt rather than holding it past its claim.
  // nodemailer is imported with the first send (core/lazy-import.ts): most processes send none.
  let opened: Transporter | undefined;
  const smtpUrl = o.smtpUrl;
  const transport = smtpUrl
    ? lazyImport(async () => {
      const { default: nodemailer } = await import('nodemailer');
      return (opened = nodemailer.createTransport({ url: smtpUrl, connectionTimeout: 15_000, greetingTimeout: 15_000, socketTimeout: 60_000 } as Parameters<typeof nodemailer.createTransport>[0]));
    })
    : undefined;
  const from = o.from || DEFAULT_FROM;

  return {
    configured: transport !== undefined,

    async enqueue(tx, m) {
      const id = newId();
      await emailOutboxRepo.insert(tx, { id, account_id: m.accountId, to_address: m.to, subject: m.subject, body_text: m.text, created_at: o.clock.now() });
      return id;
    },

    async flush(opts = {}) {
      if (!transport) return { sent: 0, failed: 0 };
      const smtp = await transport();
      const now = o.clock.now();
      const rows = await emailOutboxRepo.claimDue(o.db, now, new Date(now.getTime() + CLAIM_MS), opts.limit ?? 50, opts.ids);
      let sent = 0;
      let failed = 0;
      for (const row of rows) {
        try {
          // The outbox id as Message-ID: a resend after a crash between send and markSent is recognizable.
          await smtp.sendMail({ from, to: row.to_address, subject: row.subject, text: row.body_text, messageId: `<${row.id}@outbox>` });
          await emailOutboxRepo.markSent(o.db, row.id, o.clock.now());
          sent++;
        } catch (err) {
          failed++;
          const next = new Date(o.clock.now().getTime() + retryDelayMs(row.attempts));
          o.log.warn({ err, outbox_id: row.id, attempts: row.attempts + 1 }, 'e-mail send failed; kept in the outbox');
          await emailOutboxRepo.markFailed(o.db, row.id, (err as Error).message ?? String(err), next);
        }
      }
      return { sent, failed };
    },

    close() {
      opened?.close();
    },
  };
}
