/**
 * Vercel Edge Function: POST /api/signup {"email": "…"} enqueues "email:welcome" (queue "email",
 * unique for an hour per address) and answers 202 with the task id. Redis over HTTP: the
 * environment variables UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN (the Upstash
 * integration sets them). See ../README.md.
 */
// In your project: from "effect-asynq/edge"
import { createClient, type EdgeClient } from "../../../src/edge/index.js"

export const config = { runtime: "edge" }

let client: EdgeClient | undefined

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } })

export default async function handler(request: Request): Promise<Response> {
  if (request.method !== "POST") return json(405, { error: "POST only" })
  let body: unknown
  try {
    body = await request.json()
  } catch {
    return json(400, { error: "the body must be JSON" })
  }
  const email = typeof body === "object" && body !== null ? (body as { email?: unknown }).email : undefined
  if (typeof email !== "string" || !/^[^@\s]+@[^@\s]+$/.test(email))
    return json(400, { error: "email: an address is required" })
  client ??= createClient({
    url: process.env.UPSTASH_REDIS_REST_URL ?? "",
    token: process.env.UPSTASH_REDIS_REST_TOKEN ?? ""
  })
  try {
    const info = await client.enqueue("email:welcome", { email }, { queue: "email", unique: 3_600_000 })
    return json(202, { taskId: info.id, queue: info.queue })
  } catch (e) {
    const error = e as { readonly _tag?: string; readonly message?: string }
    if (error._tag === "DuplicateTask")
      return json(409, { error: "a welcome email for this address is already queued" })
    if (error._tag === "InvalidArgument") return json(400, { error: error.message })
    console.error(`enqueue failed: ${error._tag}: ${error.message}`)
    return json(503, { error: "the queue is unavailable, try again" })
  }
}
