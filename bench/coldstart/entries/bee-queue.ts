/** The same enqueue with bee-queue (producer only). */
import Queue from "bee-queue"

export const coldRun = async (): Promise<void> => {
  const queue = new Queue("coldstart", {
    redis: { url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" },
    isWorker: false,
    getEvents: false,
    sendEvents: false
  })
  await queue.createJob({ to: "user@example.com" }).save()
  await queue.close()
}
