// The number kinds every schema module of the profile uses, and the printed JSON's header.
import { z } from 'zod';

export const finite = () => z.number().finite();
export const nonneg = () => z.number().finite().nonnegative();

/** The header each command's JSON starts with (docs/json-output.md): its format's version and the command's kind. */
export const outputHeader = <V extends number, K extends string>(version: V, kind: K) => ({
  schemaVersion: z.literal(version),
  kind: z.literal(kind),
});
