/** The Promise client a plain Node handler uses: createClient, one enqueue, close (no Lambda adapter). */
import { createClient } from "../../../src/client.js"

/** One cold run: connect, enqueue, close. */
export const coldRun = async (): Promise<void> => {
  // No options: REDIS_URL, as a deployed function reads it.
  const client = createClient()
  await client.enqueue("email:welcome", { to: "user@example.com" }, { queue: "coldstart" })
  await client.close()
}
