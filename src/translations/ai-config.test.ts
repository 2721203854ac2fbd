import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config.ts';

/** TRANSLATION_AI_* in config.ts (the settings of the AI translator). */
const load = (env: Record<string, string>) => loadConfig({ DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'cfg-ai-')), ...env });

describe('TRANSLATION_AI_* settings', () => {
  it('are off by default', () => {
    expect(load({}).translationAi).toBeUndefined();
  });

  it('read URL, key, model and timeout (10 s by default)', () => {
    expect(load({ TRANSLATION_AI_URL: 'https://api.openai.com/v1', TRANSLATION_AI_KEY: 'sk-x', TRANSLATION_AI_MODEL: 'gpt-4o-mini' }).translationAi)
      .toEqual({ url: 'https://api.openai.com/v1', key: 'sk-x', model: 'gpt-4o-mini', timeoutMs: 10_000 });
    expect(load({ TRANSLATION_AI_URL: 'http://127.0.0.1:11434/v1', TRANSLATION_AI_MODEL: 'llama3', TRANSLATION_AI_TIMEOUT_MS: '2500' }).translationAi)
      .toEqual({ url: 'http://127.0.0.1:11434/v1', key: undefined, model: 'llama3', timeoutMs: 2500 });
  });

  it.each([
    [{ TRANSLATION_AI_URL: 'ftp://x/v1', TRANSLATION_AI_MODEL: 'm' }, 'TRANSLATION_AI_URL must be a http: or https: URL'],
    [{ TRANSLATION_AI_URL: 'not a url', TRANSLATION_AI_MODEL: 'm' }, 'TRANSLATION_AI_URL is not a valid URL'],
    [{ TRANSLATION_AI_URL: 'https://x/v1' }, 'TRANSLATION_AI_MODEL is required when TRANSLATION_AI_URL is set'],
    [{ TRANSLATION_AI_KEY: 'sk-x' }, 'TRANSLATION_AI_URL is required when TRANSLATION_AI_KEY or TRANSLATION_AI_MODEL is set'],
    [{ TRANSLATION_AI_URL: 'https://x/v1', TRANSLATION_AI_MODEL: 'm', TRANSLATION_AI_TIMEOUT_MS: '0' }, 'TRANSLATION_AI_TIMEOUT_MS must be an integer from 100 to 120000'],
  ])('a bad setting stops start-up naming it: %o', (env, message) => {
    expect(() => load(env)).toThrow(ConfigError);
    expect(() => load(env)).toThrow(message);
  });
});
