/**
 * The library host (DECISIONS "One core, three hosts"): `fiscalCall(request)`, the
 * package's `./engine` export. The spec's `fiscal_call` / JNI / WASM `fiscalCall` names
 * map to this one function. One engine per process (one data_dir); `createEngine` makes
 * others (tests, several data_dirs).
 *
 *   const r = await fiscalCall({version: 1, method: 'init', params: {...}});
 *   // → {version: 1, result: {...}} or {version: 1, error: {code, message}}
 *
 * A JSON string in gives a JSON string out. It never throws or rejects (docs/engine.md).
 */
import { createEngine, type EngineResponse } from './engine.ts';

export { createEngine, type Engine, type EngineOptions, type EngineRequest, type EngineResponse } from './engine.ts';
export { ENGINE_ERROR_CODES, type EngineErrorCode } from './errors.ts';

let engine: ReturnType<typeof createEngine> | undefined;

export function fiscalCall(request: string): Promise<string>;
export function fiscalCall(request: object): Promise<EngineResponse>;
export function fiscalCall(request: unknown): Promise<EngineResponse | string> {
  engine ??= createEngine();
  return engine.call(request as object);
}
