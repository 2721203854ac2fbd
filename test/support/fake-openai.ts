import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real HTTP server on 127.0.0.1 speaking the OpenAI Chat Completions shape
 * (`POST /v1/chat/completions`), for the translation tests.
 *
 * It checks what a real endpoint checks (Bearer key → 401, model → 404, a JSON body
 * with messages → 400), counts the requests it receives, and answers according to
 * `mode`:
 * - `ok`: a chat completion whose content is the JSON object from `answer(input)`
 *   (by default an "EN: <message>" translation);
 * - `garbage`: a chat completion whose content is prose, not JSON;
 * - `error`: HTTP 500 with an OpenAI error body.
 * `delayMs` holds every answer back (timeouts, concurrent first requests).
 */
export interface FakeAiInput {
  country: string;
  system: string | null;
  error_code: string;
  error_message: string | null;
}

export interface FakeOpenAi {
  /** Base URL to configure as TRANSLATION_AI_URL (ends in /v1). */
  url: string;
  key: string;
  model: string;
  /** Chat completion requests received (including refused ones). */
  requests: number;
  /** What each request carried: its headers and parsed body. */
  received: Array<{ authorization: string | undefined; body: Record<string, unknown> }>;
  mode: 'ok' | 'garbage' | 'error';
  delayMs: number;
  answer: (input: FakeAiInput) => Record<string, unknown>;
  /** Back to `ok`, no delay, the default answer, counters at zero. */
  reset(): void;
  close(): Promise<void>;
}

export const defaultAnswer = (input: FakeAiInput): Record<string, unknown> => ({
  translation: `EN: ${input.error_message ?? input.error_code}`,
  category: 'validation',
  severity: 'error',
  retriable: false,
  user_message: `Fix the invoice (${input.error_code}) and send it again.`,
});

export async function startFakeOpenAi(opts: { key?: string; model?: string } = {}): Promise<FakeOpenAi> {
  const key = opts.key ?? 'sk-test-fake-openai-key';
  const model = opts.model ?? 'gpt-test-mini';
  const sockets = new Set<import('node:net').Socket>();

  const state = {
    requests: 0,
    received: [] as FakeOpenAi['received'],
    mode: 'ok' as FakeOpenAi['mode'],
    delayMs: 0,
    answer: defaultAnswer,
  };

  const send = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const openAiError = (message: string, type: string, code: string | null) => ({ error: { message, type, param: null, code } });

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
          return send(res, 404, openAiError(`Unknown request URL: ${req.method} ${req.url}`, 'invalid_request_error', 'unknown_url'));
        }
        state.requests++;
        let body: Record<string, unknown>;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
        } catch {
          return send(res, 400, openAiError('We could not parse the JSON body of your request.', 'invalid_request_error', null));
        }
        state.received.push({ authorization: req.headers.authorization, body });
        if (state.delayMs > 0) await new Promise((r) => setTimeout(r, state.delayMs));
        if (req.headers.authorization !== `Bearer ${key}`) {
          return send(res, 401, openAiError('Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key'));
        }
        if (body.model !== model) {
          return send(res, 404, openAiError(`The model \`${String(body.model)}\` does not exist or you do not have access to it.`, 'invalid_request_error', 'model_not_found'));
        }
        const messages = body.messages as Array<{ role: string; content: string }> | undefined;
        const user = Array.isArray(messages) ? messages.find((m) => m.role === 'user') : undefined;
        if (!user || typeof user.content !== 'string') {
          return send(res, 400, openAiError("'messages' must contain a user message", 'invalid_request_error', null));
        }
        if (state.mode === 'error') return send(res, 500, openAiError('The server had an error while processing your request.', 'server_error', null));

        let input: FakeAiInput;
        try {
          input = JSON.parse(user.content) as FakeAiInput;
        } catch {
          input = { country: '', system: null, error_code: '', error_message: user.content };
        }
        const content = state.mode === 'garbage'
          ? 'I am sorry, but I cannot help with translating tax authority errors today.'
          : JSON.stringify(state.answer(input));
        send(res, 200, {
          id: `chatcmpl-${state.requests}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model,
          choices: [{ index: 0, message: { role: 'assistant', content }, logprobs: null, finish_reason: 'stop' }],
          usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 },
        });
      })();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const fake: FakeOpenAi = {
    url: `http://127.0.0.1:${port}/v1`,
    key,
    model,
    get requests() { return state.requests; },
    set requests(n: number) { state.requests = n; },
    get received() { return state.received; },
    set received(r) { state.received = r; },
    get mode() { return state.mode; },
    set mode(m) { state.mode = m; },
    get delayMs() { return state.delayMs; },
    set delayMs(ms) { state.delayMs = ms; },
    get answer() { return state.answer; },
    set answer(fn) { state.answer = fn; },
    reset() {
      state.requests = 0;
      state.received = [];
      state.mode = 'ok';
      state.delayMs = 0;
      state.answer = defaultAnswer;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}
