#!/usr/bin/env node
/** Runs the worker command on its own: `node adapters/worker/main.js <handlers-module> [options]`. */
import { workerCommand } from "./cli.js"

void workerCommand(process.argv.slice(2)).then((code) => process.exit(code))
