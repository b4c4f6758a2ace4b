import assert from 'node:assert/strict';
import { z } from 'zod';
import { run } from '../../src/cli/main.js';
import { fakeIo } from '../cli/fake-io.js';

/**
 * Asserts that `value` follows `schema` exactly: it parses, and parsing drops
 * nothing. zod strips keys a schema does not name, so a field the command
 * prints that its schema (and so docs/json-output.md) lacks shows up as a
 * difference, at any depth. Returns the typed value.
 */
export function assertFollowsSchema<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) assert.fail(`${what} does not follow its schema:\n${z.prettifyError(parsed.error)}`);
  assert.deepEqual(parsed.data, value, `${what} prints fields its schema does not name`);
  return parsed.data;
}

/** Runs the CLI in-process in `cwd` and returns its exit code and stdout parsed as JSON. */
export async function runJson(
  args: string[],
  cwd: string,
): Promise<{ exitCode: number; json: unknown; stderr: string }> {
  const io = fakeIo(cwd, { PATH: process.env.PATH });
  const exitCode = await run(args, io);
  return { exitCode, json: JSON.parse(io.out), stderr: io.err };
}
