#!/usr/bin/env node
// Thin launcher: the only place that touches process-wide exit state.
import { run } from '../dist/src/cli/main.js';
import { processIo } from '../dist/src/cli/io.js';

process.exitCode = await run(process.argv.slice(2), processIo());
