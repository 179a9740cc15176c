/**
 * Child process for test/client.test.ts: enqueues two tasks with the Promise client (REDIS_URL
 * from the environment), prints their ids, closes the client (unless told "no-close") and then
 * does nothing: the process must exit by itself.
 */
import { createClient } from "../../src/client.js"

const client = createClient()
const a = await client.enqueue("child:job", { pid: process.pid }, { queue: "child" })
const b = await client.enqueue("child:job", "second", { queue: "child", processIn: 60_000 })
process.stdout.write(JSON.stringify({ ids: [a.id, b.id] }))
if (process.argv[2] !== "no-close") await client.close()
