/** Enqueue-only Lambda handler built with effect-asynq (what a user deploys as the enqueue URL). */
import { createEnqueueHandler } from "../../../adapters/aws-lambda/enqueueHandler.js"

export const handler = createEnqueueHandler({ auth: { kind: "shared-secret", secret: "bench" } })

/** One cold invocation: connect, enqueue, close. */
export const coldRun = async (): Promise<void> => {
  const res = await handler({
    headers: { "x-asynq-secret": "bench" },
    body: JSON.stringify({
      type: "email:welcome",
      payload: { to: "user@example.com" },
      options: { queue: "coldstart" }
    }),
    requestContext: { http: { method: "POST" } }
  })
  if (res.statusCode !== 200) throw new Error(`enqueue failed: ${res.body}`)
  await handler.runtime.dispose()
}
