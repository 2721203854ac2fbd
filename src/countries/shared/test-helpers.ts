/** Test helper (not a test file): asserts a 400 ValidationError with an exact message. */
import { expect } from 'vitest';
import { ValidationError } from '../../core/errors.ts';

export function expect400(fn: () => unknown, message: string): void {
  let thrown: unknown;
  try {
    fn();
  } catch (err) {
    thrown = err;
  }
  expect(thrown, `expected a ValidationError "${message}"`).toBeInstanceOf(ValidationError);
  expect((thrown as ValidationError).status).toBe(400);
  expect((thrown as ValidationError).message).toBe(message);
}
