// The number kinds every schema module of the profile uses.
import { z } from 'zod';

export const finite = () => z.number().finite();
export const nonneg = () => z.number().finite().nonnegative();
