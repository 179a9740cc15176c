/**
 * A Cloudflare Worker that enqueues and runs the queue's maintenance, with no server anywhere:
 *
 * - `fetch`: POST /signup {"email": "…"} enqueues "email:welcome" (queue "email", unique for an
 *   hour per address) and answers 202 with the task id; a long-lived worker (Node, or Go asynq)
 *   processes it.
 * - `scheduled` (the cron trigger in wrangler.toml, every minute): one maintenance tick — due
 *   scheduled and retry tasks to pending, expired leases recovered, ready groups aggregated,
 *   expired completed tasks deleted.
 *
 * Redis is reached over HTTP (Upstash's REST API): set the secrets UPSTASH_REDIS_REST_URL and
 * UPSTASH_REDIS_REST_TOKEN (`wrangler secret put …`). See README.md.
 */
// In your project: from "effect-asynq/edge"
import { createClient, createTick, type EdgeClient, type EdgeTick } from "../../src/edge/index.js"

export interface Env {
  readonly UPSTASH_REDIS_REST_URL: string
  readonly UPSTASH_REDIS_REST_TOKEN: string
}

const queues = ["email", "default"]

// Built on the first request of an isolate and reused by the next ones (they hold no connection).
let client: EdgeClient | undefined
let tick: EdgeTick | undefined
const redisOf = (env: Env) => ({ url: env.UPSTASH_REDIS_REST_URL, token: env.UPSTASH_REDIS_REST_TOKEN })

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } })

const signup = async (request: Request, env: Env): Promise<Response> => {
  let body: unknown
  try {
    body = await request.json()
  } catch {
    return json(400, { error: "the body must be JSON" })
  }
  const email = typeof body === "object" && body !== null ? (body as { email?: unknown }).email : undefined
  if (typeof email !== "string" || !/^[^@\s]+@[^@\s]+$/.test(email))
    return json(400, { error: "email: an address is required" })
  client ??= createClient(redisOf(env))
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

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const { pathname } = new URL(request.url)
    if (pathname === "/signup" && request.method === "POST") return signup(request, env)
    return json(404, { error: "not found" })
  },

  async scheduled(_controller: unknown, env: Env): Promise<void> {
    tick ??= createTick({ redis: redisOf(env), queues })
    const summary = await tick()
    console.log(JSON.stringify({ msg: "effect-asynq maintenance tick", ...summary }))
    // A failed part makes the invocation fail, so it shows in the Worker's cron metrics.
    if (summary.errors.length > 0)
      throw new Error(`maintenance tick: ${summary.errors.map((e) => `${e.step}: ${e.message}`).join("; ")}`)
  }
}
