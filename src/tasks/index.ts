/**
 * `effect-asynq/tasks`: typed task definitions. `defineTask(type, payloadSchema, options?)` gives a
 * task type a payload contract (an effect `Schema`) and default enqueue options; the Promise client
 * (`effect-asynq/client`), the Effect steps and `ServeMux` all take such a definition. Kept apart
 * from `effect-asynq/client` so that a client that never defines a task does not load effect's
 * Schema (a faster cold start).
 *
 * @module
 */
export { defineTask, type SchemaTaskDefinition, type TaskOptions } from "./defineTask.js"
export type { TaskDefinition } from "../steps/TaskDefinition.js"
