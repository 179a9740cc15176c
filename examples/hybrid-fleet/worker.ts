/** The container part of a hybrid fleet: a long-lived worker serving the fleet's queues (npx tsx examples/hybrid-fleet/worker.ts). */
import { runWorker } from "../../adapters/worker/runWorker.js"
import { fleetQueues } from "./fleet.js"

const worker = await runWorker({
  queues: Object.fromEntries(fleetQueues.map((q, i) => [q, fleetQueues.length - i])),
  concurrency: 20,
  handlers: {
    "order:": async (task) => console.log(`worker: ${task.type} ${task.id}`),
    "email:": async (task) => console.log(`worker: ${task.type} ${task.id}`)
  }
})
process.once("SIGTERM", () => void worker.shutdown())
