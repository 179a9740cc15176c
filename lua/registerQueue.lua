-- registerQueue: makes a queue known to asynq tools by adding its name to the set of all queues
-- (asynq's SADD on every enqueue). Sent in the same round trip as the first enqueue to the queue;
-- the broker then remembers the queue and skips this call.
-- Kept apart from the enqueue scripts because `asynq:queues` lives in another cluster slot than
-- the queue's own keys.
--
-- KEYS[1]  set of all queue names   asynq:queues
-- ARGV[1]  queue name
--
-- Returns  1 if the queue was added, 0 if it was already there
local queuesKey = KEYS[1]
local queueName = ARGV[1]
return redis.call("SADD", queuesKey, queueName)
