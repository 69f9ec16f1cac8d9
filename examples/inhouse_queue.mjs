// An in-house queue in Node, plugged into the suite through its JSON-lines protocol (docs/guide/inhouse.md):
//   sqs-conformance run --target 'process:node examples/inhouse_queue.mjs'
// It keeps each message's visible-at deadline, as most in-house designs do, and takes its time from the
// suite's `now` on every request. It implements sending, receiving (short and long polls), changing the
// visibility and deleting; every other operation is answered `unsupported`, so the suite skips it.
import { createInterface } from "node:readline";

const CEILING = 43200;
let queues = new Map();
let issued = 0;

const error = (code, message, status = 400) => ({ type: "Error", code, message, status });
const invalid = (name, value, reason) =>
  error("InvalidParameterValue", `Value ${value} for parameter ${name} is invalid.` + (reason ? ` Reason: ${reason}` : ""));
const inRange = (value, low, high) => Number.isInteger(value) && value >= low && value <= high;
const present = (value) => value !== null && value !== undefined;

function send(q, op, now) {
  const delay = present(op.delay_seconds) ? op.delay_seconds : 0;
  if (!inRange(delay, 0, 900)) return { response: invalid("DelaySeconds", delay) };
  const id = `msg-${++issued}`;
  q.messages.set(id, { id, body: op.body, visibleAt: now + delay, receipt: null, receivedAt: null, count: 0, first: null });
  return { response: { type: "SendOk", message_id: id } };
}

function receive(q, op, now) {
  const max = present(op.max_messages) ? op.max_messages : 1;
  const timeout = present(op.visibility_timeout) ? op.visibility_timeout : q.visibilityTimeout;
  const wait = present(op.wait_time_seconds) ? op.wait_time_seconds : 0;
  if (!inRange(max, 1, 10)) return { response: invalid("MaxNumberOfMessages", max, "Must be between 1 and 10, if provided.") };
  if (!inRange(timeout, 0, CEILING)) return { response: invalid("VisibilityTimeout", timeout) };
  if (!inRange(wait, 0, 20)) return { response: invalid("WaitTimeSeconds", wait, "Must be >= 0 and <= 20, if provided.") };
  let at = now;
  let ready = [...q.messages.values()].filter((m) => m.visibleAt <= at);
  if (ready.length === 0 && wait > 0) { // a long poll returns when the first message becomes visible
    const next = Math.min(...[...q.messages.values()].map((m) => m.visibleAt).filter((t) => t <= now + wait));
    at = Number.isFinite(next) ? next : now + wait;
    ready = [...q.messages.values()].filter((m) => m.visibleAt <= at);
  }
  const messages = ready.slice(0, max).map((m) => {
    m.count += 1;
    m.first ??= at;
    m.receipt = `rh-${++issued}-${m.id}`;
    m.receivedAt = at;
    m.visibleAt = at + timeout;
    return { type: "ReceivedMessage", message_id: m.id, body: m.body, receipt_handle: m.receipt,
             receive_count: m.count, first_receive_ms: Math.round(m.first * 1000) };
  });
  return { response: { type: "ReceiveOk", messages }, at };
}

const wellFormed = (handle) => /^rh-\d+-msg-\d+$/.test(handle);

function change(q, op, now) {
  const handle = op.receipt_handle;
  if (!wellFormed(handle)) return { response: error("ReceiptHandleIsInvalid", "The receipt handle is not valid.", 404) };
  if (!inRange(op.visibility_timeout, 0, CEILING)) return { response: invalid("VisibilityTimeout", op.visibility_timeout) };
  const m = [...q.messages.values()].find((m) => m.receipt === handle);
  if (!m || m.visibleAt <= now) {
    return { response: invalid("ReceiptHandle", handle, "Message does not exist or is not available for visibility timeout change.") };
  }
  if (now + op.visibility_timeout - m.receivedAt > CEILING) { // counted from the receive, not the change
    return { response: invalid("VisibilityTimeout", op.visibility_timeout, "Total VisibilityTimeout for the message is beyond the limit [43200 seconds].") };
  }
  m.visibleAt = now + op.visibility_timeout; // set, never added to the time left
  return { response: { type: "ChangeOk" } };
}

function remove(q, op) {
  const handle = op.receipt_handle;
  if (!wellFormed(handle)) {
    return { response: error("ReceiptHandleIsInvalid", `The input receipt handle "${handle}" is not a valid receipt handle.`, 404) };
  }
  const id = handle.slice(handle.indexOf("msg-"));
  q.messages.delete(id); // any handle of the message deletes it, and deleting twice is fine
  return { response: { type: "Ok" } };
}

function answer(request) {
  if (request.hello) return { name: "inhouse-node", version: "1.0", profiles: ["sqs-standard"] };
  if (request.reset) { queues = new Map(); issued = 0; return { ok: true }; }
  const op = request.operation;
  const now = request.now;
  if (op.type === "CreateQueue") {
    const known = new Set(["VisibilityTimeout"]);
    const others = Object.keys(op.attributes ?? {}).filter((name) => !known.has(name));
    if (others.length) return { unsupported: `queue attributes ${others.join(", ")}` };
    const timeout = op.attributes?.VisibilityTimeout ?? 30;
    if (!inRange(timeout, 0, CEILING)) return { response: error("InvalidAttributeValue", "Invalid value for the parameter VisibilityTimeout.") };
    queues.set(op.queue, { visibilityTimeout: timeout, messages: new Map() });
    return { response: { type: "Ok" } };
  }
  const q = queues.get(op.queue);
  const handlers = { SendMessage: send, ReceiveMessage: receive, ChangeMessageVisibility: change, DeleteMessage: remove };
  if (!handlers[op.type] || (op.type === "SendMessage" && op.group_id)) return { unsupported: op.type };
  if (!q) return { unsupported: `${op.type} on a queue it could not create` };
  return handlers[op.type](q, op, now);
}

for await (const line of createInterface({ input: process.stdin })) {
  process.stdout.write(JSON.stringify(answer(JSON.parse(line))) + "\n");
}
