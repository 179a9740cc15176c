/** The same enqueue with BullMQ. */
import { Queue } from "bullmq"

export const coldRun = async (): Promise<void> => {
  const u = new URL(process.env.REDIS_URL ?? "redis://127.0.0.1:6379")
  const queue = new Queue("coldstart", {
    connection: { host: u.hostname, port: Number(u.port || 6379), db: Number(u.pathname.slice(1) || 0) }
  })
  await queue.add("email:welcome", { to: "user@example.com" })
  await queue.close()
}
