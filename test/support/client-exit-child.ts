/**
 * Child process for test/client.test.ts: enqueues two tasks with the Promise client (REDIS_URL
 * from the environment), prints their ids, closes the client (unless told "no-close") and then
 * does nothing: the process must exit by itself. After close() it also prints what Node still holds
 * active (timers, sockets): nothing may be left.
 */
import { createClient } from "../../src/client.js"

const client = createClient()
const a = await client.enqueue("child:job", { pid: process.pid }, { queue: "child" })
const b = await client.enqueue("child:job", "second", { queue: "child", processIn: 60_000 })
process.stdout.write(JSON.stringify({ ids: [a.id, b.id] }) + "\n")
if (process.argv[2] !== "no-close") {
  await client.close()
  // What would keep the process alive once close() resolved (timers, sockets); the pipe to the parent is not ours.
  const active = process.getActiveResourcesInfo().filter((r) => r !== "PipeWrap" && r !== "TTYWrap")
  process.stdout.write(JSON.stringify({ activeAfterClose: active }) + "\n")
}
