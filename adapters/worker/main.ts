#!/usr/bin/env node
/**
 * The worker on its own: `node adapters/worker/main.js <handlers-module> [flags]` is
 * `effect-asynq worker <handlers-module> [flags]` (same flags, parsed by the CLI).
 */
process.argv.splice(2, 0, "worker")
await import("../cli/main.js")
