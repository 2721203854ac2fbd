import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOpenAi, type FakeOpenAi } from '../../test/support/fake-openai.ts';
import { AiTranslationError, chatCompletionsUrl, createAiClient, parseAiAnswer } from './ai-client.ts';

const good = { translation: 'Duplicate invoice.', category: 'submission', severity: 'warning', retriable: false, user_message: 'Already registered.' };

describe('parseAiAnswer', () => {
  it('accepts the five fields, trimmed, enums case-insensitive, inside a ```json fence too', () => {
    expect(parseAiAnswer(JSON.stringify(good))).toEqual(good);
    expect(parseAiAnswer('```json\n' + JSON.stringify({ ...good, category: ' Submission ', translation: ' Duplicate invoice. ' }) + '\n```')).toEqual(good);
    expect(parseAiAnswer(JSON.stringify({ ...good, extra: 'ignored' }))).toEqual(good);
  });

  it.each([
    ['prose', 'Sorry, I cannot help.'],
    ['an array', '[1, 2]'],
    ['no content', undefined],
    ['a bad category', JSON.stringify({ ...good, category: 'fatal' })],
    ['a bad severity', JSON.stringify({ ...good, severity: 'critical' })],
    ['retriable as a string', JSON.stringify({ ...good, retriable: 'false' })],
    ['an empty translation', JSON.stringify({ ...good, translation: '  ' })],
    ['a missing user_message', JSON.stringify({ ...good, user_message: undefined })],
    ['an over-long translation', JSON.stringify({ ...good, translation: 'x'.repeat(2001) })],
  ])('rejects %s', (_name, content) => {
    expect(() => parseAiAnswer(content)).toThrow(AiTranslationError);
  });
});

describe('createAiClient against an OpenAI-compatible server', () => {
  let fake: FakeOpenAi;
  beforeAll(async () => {
    fake = await startFakeOpenAi();
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  const client = (over: Partial<{ key: string; model: string; timeoutMs: number }> = {}) =>
    createAiClient({ url: fake.url, key: fake.key, model: fake.model, timeoutMs: 2000, ...over });

  it('posts to {url}/chat/completions with the Bearer key, the model, a system prompt and the error as JSON data', async () => {
    const t = await client().translate({ country: 'ES', system: 'verifactu', code: '9999', message: 'Error desconocido' });
    expect(t).toEqual({ translation: 'EN: Error desconocido', category: 'validation', severity: 'error', retriable: false, user_message: 'Fix the invoice (9999) and send it again.' });
    expect(fake.requests).toBe(1);
    const sent = fake.received[0]!;
    expect(sent.authorization).toBe(`Bearer ${fake.key}`);
    expect(sent.body).toMatchObject({ model: fake.model, temperature: 0, response_format: { type: 'json_object' } });
    const messages = sent.body.messages as Array<{ role: string; content: string }>;
    expect(messages[0]).toMatchObject({ role: 'system' });
    expect(messages[0]!.content).toMatch(/JSON object/);
    expect(JSON.parse(messages[1]!.content)).toEqual({ country: 'ES', system: 'verifactu', error_code: '9999', error_message: 'Error desconocido' });
  });

  it('joins the base URL with or without a trailing slash', () => {
    expect(chatCompletionsUrl('https://api.openai.com/v1/')).toBe('https://api.openai.com/v1/chat/completions');
    expect(chatCompletionsUrl('https://api.openai.com/v1')).toBe('https://api.openai.com/v1/chat/completions');
  });

  it('reports each failure by kind: bad key, unknown model, server error, garbage, timeout, unreachable', async () => {
    const input = { country: 'IT', system: 'sdi', code: '00999', message: null };
    await expect(client({ key: 'sk-wrong' }).translate(input)).rejects.toMatchObject({ kind: 'http', status: 401 });
    await expect(client({ model: 'other' }).translate(input)).rejects.toMatchObject({ kind: 'http', status: 404 });
    fake.mode = 'error';
    await expect(client().translate(input)).rejects.toMatchObject({ kind: 'http', status: 500 });
    fake.mode = 'garbage';
    await expect(client().translate(input)).rejects.toMatchObject({ kind: 'invalid_answer' });
    fake.mode = 'ok';
    fake.delayMs = 500;
    await expect(client({ timeoutMs: 100 }).translate(input)).rejects.toMatchObject({ kind: 'timeout' });
    await expect(createAiClient({ url: 'http://127.0.0.1:9/v1', model: 'm', timeoutMs: 2000 }).translate(input)).rejects.toMatchObject({ kind: 'network' });
  });

  it('never puts the key in an error message', async () => {
    fake.mode = 'error';
    const err = await client().translate({ country: 'FR', system: null, code: 'X', message: null }).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(AiTranslationError);
    expect(String((err as Error).message)).not.toContain(fake.key);
  });
});
