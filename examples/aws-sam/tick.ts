/** Maintenance tick, every minute (EventBridge schedule). */
import { createTickHandler } from "../../adapters/aws-lambda/tickHandler.js"
import { redisUrl } from "./secrets.js"

export const handler = createTickHandler({
  queues: ["default", "email"],
  redis: await redisUrl(),
  batch: 500,
  aggregation: {
    gracePeriodMs: 30_000,
    aggregator: (group, tasks) => ({ type: "email:digest", payload: { group, count: tasks.length } })
  }
})
