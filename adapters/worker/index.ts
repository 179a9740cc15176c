/** The long-lived worker: `runWorker` (Promise API) and the `effect-asynq worker` command. */
export { runWorker, type WorkerConfig, type WorkerHandle } from "./runWorker.js"
export { type HandlersModuleOptions, loadHandlersModule, workerCommand } from "./cli.js"
export { parseQueueWeights, type WorkerArgs } from "./args.js"
export * from "../../src/processor/index.js"
