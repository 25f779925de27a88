// inboxspec harness protocol v1 adapter for the Node.js wake-gate port.
// Run: inboxspec conform --adapter "node conformance/ports/node/adapter.mjs"
import { createInterface } from "node:readline";
import { WakeGateError, WakePolicy } from "./wake-gate.mjs";

const FEATURES = {
  "wake-gate": [
    "option:announce_requires_refusal",
    "option:cadence_from_allowed_wakes",
    "option:clamp_backwards_clock",
    "option:reject_empty_batch",
  ],
};

// WAKE-IF-2: each event's arguments; any other name is invalid_argument (WAKE-IF-3).
const EVENT_ARGUMENTS = {
  decide: ["batch", "now_ms", "plugin_pending"], announce_refusal: [], reset_streak: [],
  set_streak: ["value"], set_floor: ["value"],
};

// One step of a wake-gate case; a typed error becomes {error: code} with the unchanged streak.
function applyStep(policy, { event, args = {} }) {
  if (!Object.hasOwn(EVENT_ARGUMENTS, event)) throw new Error(`unknown event ${event}`);
  if (args === null || typeof args !== "object" || Array.isArray(args)) throw new Error("args is not an object");
  try {
    const extra = Object.keys(args).filter((name) => !EVENT_ARGUMENTS[event].includes(name));
    if (extra.length) throw new WakeGateError("invalid_argument", `unknown argument(s) ${extra}`);
    switch (event) {
      case "decide": // a missing plugin_pending is false; a null one is invalid (WAKE-IF-3)
        return { ...policy.decide(args.batch, { nowMs: args.now_ms, pluginPending: "plugin_pending" in args ? args.plugin_pending : false }), streak: policy.streak };
      case "announce_refusal":
        return { announce: policy.announceRefusal(), streak: policy.streak };
      case "reset_streak":
        policy.resetStreak();
        break;
      case "set_streak":
        policy.setStreak(args.value);
        break;
      case "set_floor":
        policy.setFloor(args.value);
        break;
      default:
        throw new Error(`unknown event ${event}`);
    }
    return { streak: policy.streak };
  } catch (error) {
    if (error instanceof WakeGateError) return { error: error.code, streak: policy.streak };
    throw error;
  }
}

function runCase({ machine, config, steps }) {
  if (machine !== "wake-gate") return null;
  let policy;
  try {
    policy = new WakePolicy(config);
  } catch (error) {
    if (error instanceof WakeGateError) return { config_error: error.code };
    throw error;
  }
  return { outputs: steps.map((step) => applyStep(policy, step)) };
}

// PROTO-MAL-1/2: a request that cannot be run still gets one reply, echoing seq and id when readable.
function errored(request, message) {
  const seq = request?.seq ?? null;
  const id = typeof request?.case?.id === "string" ? request.case.id : "";
  return { seq, id, errored: { message } };
}

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

// Where a run request breaks run.schema.json, or null (PROTO-MAL-2).
function runRequestProblem(request) {
  if (!("seq" in request)) return "run request has no seq";
  const testCase = request.case;
  if (!isObject(testCase)) return "run request has no case object";
  if (typeof testCase.id !== "string" || typeof testCase.machine !== "string") return "case id or machine is not a string";
  if (!isObject(testCase.config)) return "case config is missing or not an object";
  if (!Array.isArray(testCase.steps)) return "case steps is missing or not a list";
  for (const [number, step] of testCase.steps.entries()) {
    if (!isObject(step) || typeof step.event !== "string") return `step ${number} is not an object with a string event`;
    if ("args" in step && !isObject(step.args)) return `step ${number} args is not an object`;
  }
  return null;
}

function handle(request) {
  if (!isObject(request)) return errored(null, "request is not a JSON object");
  if (request.cmd === "start") {
    return {
      ready: true, version: 1,
      implementation: { name: "inboxspec-node-example", version: "0.1.0", language: `javascript (node ${process.version})` },
      machines: Object.keys(FEATURES), features: FEATURES,
    };
  }
  if (request.cmd !== "run") return errored(request, `unknown command ${JSON.stringify(request.cmd)}`);
  const problem = runRequestProblem(request);
  if (problem) return errored(request, `malformed run request: ${problem}`);
  const { seq, case: testCase } = request;
  const reply = { seq, id: testCase.id };
  try {
    const result = runCase(testCase);
    return result ? { ...reply, result } : { ...reply, skipped: { reason: `machine ${testCase.machine} not implemented` } };
  } catch (error) {
    return { ...reply, errored: { message: String(error), context: { stack: error.stack } } };
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) { // every line is a request, a blank one too (PROTO-MAL-1)
  let request;
  try {
    request = JSON.parse(line);
  } catch (error) {
    process.stdout.write(JSON.stringify(errored(null, `request is not JSON: ${error.message}`)) + "\n");
    continue;
  }
  if (isObject(request) && request.cmd === "stop") break;
  // JSON.stringify escapes a lone surrogate as \udXXX, so the line stays UTF-8 (PROTO-MAL-3).
  process.stdout.write(JSON.stringify(handle(request)) + "\n");
}
