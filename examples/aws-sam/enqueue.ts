/** Enqueue URL (function URL, HMAC-signed requests). */
import { createEnqueueHandler } from "../../adapters/aws-lambda/enqueueHandler.js"

export const handler = createEnqueueHandler({
  auth: { kind: "hmac", secret: process.env.ENQUEUE_SECRET ?? "" },
  allowedQueues: ["default", "email"]
})
