import net from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of a server (PostgreSQL, Redis), for failure tests:
 * it can refuse new connections (`down`), cut every open one (`cut`), swallow traffic
 * without answering (`blackhole`: the peer accepts and never replies), cut a
 * connection the moment the client sends bytes matching a pattern (`cutOn`: a
 * connection dropped in the middle of a request), or silence that one connection from
 * then on, one way (`holdOn`: one statement's answer lost, or the statement itself,
 * while the other connections go on).
 */
export interface TcpProxy {
  port: number;
  url(template: string): string;
  /** Refuse new connections and cut the open ones (the server is gone). */
  down(): Promise<void>;
  /** Accept and forward again. */
  up(): Promise<void>;
  /** Cut every open connection (the server restarted, a backend was terminated). */
  cut(): void;
  /**
   * Accept connections but forward nothing either way (a peer that never answers), or with
   * `answers`: forward what clients send, and none of the answers (the server runs the
   * statement, its answer is lost on the way back).
   */
  blackhole(on: boolean, which?: 'both' | 'answers'): void;
  /**
   * Cut the connection that next sends data matching `pattern`. `before` (default): the
   * data is not forwarded (the server never sees the statement); `after`: it is forwarded,
   * and the connection is cut when the server answers (the statement ran, its answer is lost).
   * Resolves when the cut happened.
   */
  cutOn(pattern: RegExp, when?: 'before' | 'after'): Promise<string>;
  /**
   * Silence, without cutting it, the connection that next sends data matching `pattern`
   * (the client waits for an answer until its own timeout gives the connection up): with
   * `answers`, that data and what the client sends after go through and none of the
   * server's answers come back (the statement runs, its answer is lost); with
   * `statements`, neither that data nor anything after it reaches the server (it never
   * sees the statement). Other connections are untouched. Resolves when it happened.
   * With `then`, the connection that sends `pattern` is silenced only from the next data
   * it sends matching `then` (a transaction's COMMIT after its marked statement).
   */
  holdOn(pattern: RegExp, what: 'answers' | 'statements', then?: RegExp): Promise<string>;
  /** Every chunk the clients sent, as latin1 text (for tests that look at what went through). */
  sent: string[];
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<{ client: net.Socket; server: net.Socket }>();
  let holes: false | 'both' | 'answers' = false;
  let trap: { pattern: RegExp; when: 'before' | 'after'; fire: (s: string) => void } | undefined;
  type Hold = { pattern: RegExp; what: 'answers' | 'statements'; then?: RegExp | undefined; fire: (s: string) => void };
  let hold: Hold | undefined;
  const sent: string[] = [];
  const handler = (client: net.Socket) => {
    const server = net.connect(target.port, target.host);
    const pair = { client, server };
    let cutOnAnswer: (() => void) | undefined;
    /** This connection silenced one way (`holdOn`). */
    let held: 'answers' | 'statements' | undefined;
    /** This connection sent a `holdOn` pattern with `then`: silenced once it sends that. */
    let heldNext: Hold | undefined;
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      server.destroy();
    };
    client.on('error', end).on('close', end);
    server.on('error', end).on('close', end);
    client.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1');
      sent.push(text);
      if (hold && hold.pattern.test(text)) {
        const h = hold;
        hold = undefined;
        if (h.then) heldNext = h;
        else {
          held = h.what;
          h.fire(text);
        }
      } else if (heldNext?.then?.test(text)) {
        const h = heldNext;
        heldNext = undefined;
        held = h.what;
        h.fire(text);
      }
      if (held === 'statements') return;
      if (trap && trap.pattern.test(text)) {
        const t = trap;
        trap = undefined;
        if (t.when === 'after') {
          cutOnAnswer = () => {
            end();
            t.fire(text);
          };
        } else {
          end();
          t.fire(text);
          return;
        }
      }
      if (holes !== 'both') server.write(chunk);
    });
    server.on('data', (chunk: Buffer) => {
      if (cutOnAnswer) return cutOnAnswer();
      if (!holes && held !== 'answers') client.write(chunk);
    });
  };
  let srv = net.createServer(handler);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  const cut = () => {
    for (const p of [...pairs]) {
      p.client.destroy();
      p.server.destroy();
    }
    pairs.clear();
  };
  return {
    port,
    sent,
    url: (template) => {
      const u = new URL(template);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    async down() {
      cut();
      await new Promise<void>((r) => srv.close(() => r()));
      cut();
    },
    async up() {
      srv = net.createServer(handler);
      await new Promise<void>((r) => srv.listen(port, '127.0.0.1', r));
    },
    cut,
    blackhole: (on, which = 'both') => void (holes = on ? which : false),
    cutOn: (pattern, when = 'before') => new Promise<string>((fire) => (trap = { pattern, when, fire })),
    holdOn: (pattern, what, then) => new Promise<string>((fire) => (hold = { pattern, what, then, fire })),
    async close() {
      cut();
      await new Promise<void>((r) => srv.close(() => r()));
    },
  };
}
