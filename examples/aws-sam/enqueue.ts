/** Enqueue URL (function URL, HMAC-signed requests). */
import { createEnqueueHandler } from "../../adapters/aws-lambda/enqueueHandler.js"

export const handler = createEnqueueHandler({
  // An unset ENQUEUE_SECRET fails here, at cold start, with a clear InvalidArgument (never an open endpoint).
  auth: { kind: "hmac", secret: process.env.ENQUEUE_SECRET! },
  allowedQueues: ["default", "email"]
})
