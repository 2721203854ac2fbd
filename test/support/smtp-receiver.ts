import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/**
 * A real SMTP server on 127.0.0.1 for the tests (the `smtp-server` package): takes the
 * messages the service sends through nodemailer, with a user name and password (AUTH
 * PLAIN/LOGIN over plain text, as on a loopback relay), and keeps what it received.
 * `failNext(n)` refuses the next n messages with a 451 (temporary failure), so the
 * outbox's retry is tested against a real refusal.
 */
export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  messageId: string;
  /** The text body, quoted-printable decoded. */
  text: string;
  raw: string;
}

export interface SmtpReceiver {
  /** smtp://user:pass@127.0.0.1:<port> */
  url: string;
  received: ReceivedMail[];
  failNext(n: number): void;
  /** Resolves once `count` messages have arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

const USER = 'mailer';
const PASS = 'mail-secret';

function headerOf(head: string, name: string): string {
  const unfolded = head.replace(/\r\n[ \t]+/g, ' ');
  const m = new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(unfolded);
  return m ? m[1]!.trim() : '';
}

/** RFC 2047 encoded words (=?UTF-8?Q?…?= / =?UTF-8?B?…?=) as nodemailer writes long or non-ASCII subjects. */
function decodeWords(s: string): string {
  return s.replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=\s*/g, (_m, _cs, enc: string, text: string) =>
    enc.toUpperCase() === 'B'
      ? Buffer.from(text, 'base64').toString('utf8')
      : Buffer.from(text.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (_x, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1').toString('utf8'));
}

function decodeBody(head: string, body: string): string {
  const cte = headerOf(head, 'Content-Transfer-Encoding').toLowerCase();
  if (cte === 'quoted-printable') {
    const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_x, h: string) => String.fromCharCode(parseInt(h, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  }
  if (cte === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return body;
}

export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const received: ReceivedMail[] = [];
  let failures = 0;
  const waiters: { count: number; resolve: () => void }[] = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: false,
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.username === USER && auth.password === PASS) return cb(null, { user: USER });
      return cb(new Error('invalid credentials'));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (failures > 0) {
          failures--;
          const err = new Error('try again later') as Error & { responseCode: number };
          err.responseCode = 451;
          return cb(err);
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        const split = raw.indexOf('\r\n\r\n');
        const head = split >= 0 ? raw.slice(0, split) : raw;
        const body = split >= 0 ? raw.slice(split + 4) : '';
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          subject: decodeWords(headerOf(head, 'Subject')),
          messageId: headerOf(head, 'Message-ID'),
          text: decodeBody(head, body),
          raw,
        });
        for (const w of [...waiters]) {
          if (received.length >= w.count) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve();
          }
        }
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://${USER}:${PASS}@127.0.0.1:${port}`,
    received,
    failNext(n) {
      failures = n;
    },
    waitFor(count, timeoutMs = 5000) {
      if (received.length >= count) return Promise.resolve(received);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`expected ${count} e-mails, received ${received.length}`)), timeoutMs);
        waiters.push({ count, resolve: () => { clearTimeout(timer); resolve(received); } });
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
