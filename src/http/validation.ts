import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { ValidationError } from '../core/errors.ts';

/**
 * Request validation: one JSON schema per route gives validation, types and OpenAPI.
 *
 * Two Ajv instances: query strings, path params and headers are text, so they are
 * coerced ("20" → 20); JSON bodies are not (a string where a number belongs is an
 * error, never silently converted — money will travel in these bodies).
 *
 * Messages. A schema may carry `x-error`: the exact message to send when that value is
 * invalid. Otherwise a missing or invalid required field gets the spec's Go-validator
 * form, `Key: 'CreateRequest.<Field>' Error:Field validation for '<Field>' failed on the
 * '<tag>' tag`, which the spec promises for name, billing_email, location name and
 * location_id.
 */
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: true,
    allErrors: false,
    verbose: true, // errors carry parentSchema, where `x-error` lives
    strict: false,
    keywords: ['x-error'],
  });
  addFormats(ajv);
  return ajv;
}

const bodyAjv = makeAjv(false);
const textAjv = makeAjv(true);

/** The body schemas' error objects carry their root schema (nullIsMissing reads it). */
const ROOT = Symbol('root schema');
type RootedError = ErrorObject & { [ROOT]?: unknown };

/**
 * Integers in text (query strings, path params, headers) are written in decimal digits.
 * Ajv's coercion accepts whatever `+text` reads as a number ("1e2", "0x10", " 5"), which
 * would let `limit=1e2` pass as 100: such a value is made non-numeric before validation,
 * so it fails with its field's own message.
 */
const DECIMAL_INTEGER = /^[+-]?\d+$/;
function integerNames(schema: unknown): string[] {
  const props = (schema as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties;
  if (!props) return [];
  return Object.entries(props).filter(([, p]) => p?.type === 'integer').map(([name]) => name);
}

function compileText(schema: object): unknown {
  const validate = textAjv.compile(schema);
  const names = integerNames(schema);
  if (names.length === 0) return validate;
  const strict = (data: unknown): boolean => {
    if (data !== null && typeof data === 'object') {
      const fields = data as Record<string, unknown>;
      for (const name of names) {
        const v = fields[name];
        if (typeof v === 'string' && !DECIMAL_INTEGER.test(v)) fields[name] = `not an integer: ${v}`;
      }
    }
    const ok = validate(data);
    strict.errors = validate.errors;
    return ok;
  };
  strict.errors = null as typeof validate.errors;
  return strict;
}

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  if (httpPart !== 'body') return compileText(schema as object) as never;
  const validate = bodyAjv.compile(schema as object);
  const rooted = (data: unknown): boolean => {
    const ok = validate(data);
    rooted.errors = validate.errors?.map((e): RootedError => ({ ...e, [ROOT]: schema })) ?? null;
    return ok;
  };
  rooted.errors = null as RootedError[] | null;
  return rooted as never;
};

/**
 * A required field sent as `null` is a missing one (what Go's decoder makes of it: the
 * zero value, which then fails `required`), so it gets the spec's `Key:` message rather
 * than "must be a string". An optional field's null stays a type error.
 */
function nullIsMissing(e: RootedError): boolean {
  if (e.keyword !== 'type' || e.data !== null) return false;
  // …/properties/<name>/type: the object schema is three segments up.
  const path = e.schemaPath.replace(/^#\/?/, '').split('/').filter(Boolean);
  if (path.length < 3 || path.at(-3) !== 'properties') return false;
  let node: unknown = e[ROOT];
  for (const seg of path.slice(0, -3)) node = (node as Record<string, unknown> | undefined)?.[decodeURIComponent(seg.replace(/~1/g, '/').replace(/~0/g, '~'))];
  const required = (node as { required?: unknown } | undefined)?.required;
  return Array.isArray(required) && required.includes(path.at(-2));
}

/** snake_case → the Go struct field name the spec's messages use (location_id → LocationID). */
export function goFieldName(snake: string): string {
  return snake
    .split('_')
    .map((part) => (part === 'id' ? 'ID' : part === 'url' ? 'URL' : part.charAt(0).toUpperCase() + part.slice(1)))
    .join('');
}

const goTag = (e: ErrorObject): string => {
  switch (e.keyword) {
    case 'required': return 'required';
    case 'minLength': return (e.params as { limit: number }).limit <= 1 ? 'required' : 'min';
    case 'maxLength': case 'maximum': case 'maxItems': return 'max';
    case 'minimum': case 'minItems': return 'min';
    case 'format': return (e.params as { format: string }).format;
    case 'enum': return 'oneof';
    // Text fields use pattern \S ("has a non-blank character"): failing it is being blank.
    case 'pattern': return (e.params as { pattern: string }).pattern === '\\S' ? 'required' : 'pattern';
    default: return e.keyword;
  }
};

function fieldOf(e: ErrorObject): string {
  if (e.keyword === 'required') {
    const parent = e.instancePath.split('/').filter(Boolean).join('.');
    const missing = (e.params as { missingProperty: string }).missingProperty;
    return parent ? `${parent}.${missing}` : missing;
  }
  return e.instancePath.split('/').filter(Boolean).join('.');
}

export function messageFor(e: ErrorObject, part: string): string {
  const parent = e.parentSchema as Record<string, unknown> | undefined;
  if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty: string }).missingProperty;
    const propSchema = (parent?.properties as Record<string, Record<string, unknown>> | undefined)?.[missing];
    const custom = propSchema?.['x-error-required'] ?? propSchema?.['x-error'];
    if (typeof custom === 'string') return custom;
  } else if (e.keyword === 'type' && nullIsMissing(e) && typeof parent?.['x-error-required'] === 'string') {
    // A required field sent as null is a missing one (docs/decisions.md "Errors").
    return parent['x-error-required'] as string;
  } else if (e.keyword === 'type' && typeof parent?.['x-error-type'] === 'string') {
    // The wrong type, where the field's general message would say something false ("5" is not "less than 1").
    return parent['x-error-type'] as string;
  } else if (typeof parent?.['x-error'] === 'string') {
    return parent['x-error'] as string;
  }
  const field = fieldOf(e);
  if (part !== 'body') return `${field || part} ${e.message ?? 'is invalid'}`;
  if (!field) return e.keyword === 'type' ? 'request body must be a JSON object' : `request body ${e.message ?? 'is invalid'}`;
  const missing = nullIsMissing(e);
  if (e.keyword === 'type' && !missing) return `${field} must be ${(e.params as { type: string }).type === 'integer' ? 'an integer' : `a ${(e.params as { type: string }).type}`}`;
  const go = field.split('.').map((seg) => (/^\d+$/.test(seg) ? `[${seg}]` : goFieldName(seg))).join('.').replace(/\.\[/g, '[');
  const last = go.split('.').pop()!;
  return `Key: 'CreateRequest.${go}' Error:Field validation for '${last}' failed on the '${missing ? 'required' : goTag(e)}' tag`;
}

export function schemaErrorFormatter(errors: ErrorObject[], dataVar: string): Error {
  return new ValidationError(messageFor(errors[0]!, dataVar));
}
