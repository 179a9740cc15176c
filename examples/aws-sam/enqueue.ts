/** Enqueue URL (function URL, HMAC-signed requests; IAM auth on the URL by default, see template.yaml). */
import { invokeOnQueueStarted } from "../../adapters/aws-lambda/dispatchTrigger.js"
import { createEnqueueHandler } from "../../adapters/aws-lambda/enqueueHandler.js"
import { redisUrl, secretValue } from "./secrets.js"

const dispatcher = process.env.DISPATCHER_FUNCTION
export const handler = createEnqueueHandler({
  // An unset secret fails here, at cold start, with a clear InvalidArgument (never an open endpoint).
  auth: { kind: "hmac", secret: (await secretValue("ENQUEUE_SECRET_ARN", "ENQUEUE_SECRET"))! },
  allowedQueues: ["default", "email"],
  redis: await redisUrl(),
  // Dispatch on enqueue: a task in an empty queue starts a processor within seconds.
  ...(dispatcher ? { onQueueStarted: invokeOnQueueStarted({ functionName: dispatcher }) } : {})
})
