/**
 * Vercel Cron route (vercel.json: every minute): one maintenance tick of the queues — due
 * scheduled and retry tasks to pending, expired leases recovered, ready groups aggregated,
 * expired completed tasks deleted. Vercel calls it with `Authorization: Bearer $CRON_SECRET`;
 * anything else is refused. Answers the tick's summary (500 when a part failed).
 */
// In your project: from "effect-asynq/edge"
import { createTick, type EdgeTick } from "../../../src/edge/index.js"

export const config = { runtime: "edge" }

const queues = ["email", "default"]
let tick: EdgeTick | undefined

/** Compares without an early exit, so the time taken does not tell how much of the secret matched. */
const sameText = (a: string, b: string): boolean => {
  let diff = a.length ^ b.length
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a.charCodeAt(i) || 0) ^ (b.charCodeAt(i) || 0)
  return diff === 0
}

export default async function handler(request: Request): Promise<Response> {
  const secret = process.env.CRON_SECRET
  if (!secret || !sameText(request.headers.get("authorization") ?? "", `Bearer ${secret}`))
    return new Response("unauthorized", { status: 401 })
  tick ??= createTick({
    redis: { url: process.env.UPSTASH_REDIS_REST_URL ?? "", token: process.env.UPSTASH_REDIS_REST_TOKEN ?? "" },
    queues
  })
  try {
    const summary = await tick()
    return new Response(JSON.stringify(summary), {
      status: summary.errors.length > 0 ? 500 : 200,
      headers: { "content-type": "application/json" }
    })
  } catch (e) {
    // Only an unusable url/token gets here (RedisConnectionError).
    return new Response(JSON.stringify({ error: (e as Error).message }), {
      status: 500,
      headers: { "content-type": "application/json" }
    })
  }
}
