/**
 * Child process for test/redis/fastStringPrototype.test.ts, run with --allow-natives-syntax: reports
 * whether String.prototype has fast properties after ioredis is loaded, and after the Promise client
 * opened its connection and enqueued a task (REDIS_URL from the environment).
 */
import "ioredis"
import { createClient } from "../../src/client.js"

const hasFastProperties = new Function("o", "return %HasFastProperties(o)") as (o: object) => boolean
const afterIoredis = hasFastProperties(String.prototype)
const client = createClient()
await client.enqueue("child:string-prototype", "x", { queue: "child-sp" })
const afterConnect = hasFastProperties(String.prototype)
await client.close()
process.stdout.write(JSON.stringify({ afterIoredis, afterConnect }) + "\n")
