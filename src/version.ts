import { readFileSync } from 'node:fs';

/** The CLI's name. */
export const TOOL_NAME = 'ds-analyzer';

/** The version in package.json (read once at start-up). */
export const TOOL_VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
