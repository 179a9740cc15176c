export { createClient, type EdgeClient, type EnqueueOutcome } from "./client.js"
export { DuplicateTask, InvalidArgument, TaskIdConflict } from "../broker/errors.js"
export { RedisConnectionError, RedisError } from "../redis/errors.js"
export { payloadJson, payloadText } from "../wire/payload.js"
// Loads effect's Schema only where a definition is made: a bundle that never calls defineTask drops it.
export { defineTask, type SchemaTaskDefinition } from "../tasks/defineTask.js"
export { createTick, type EdgeTick, type EdgeTickConfig } from "./tick.js"
