// inboxspec harness protocol v1 adapter for the Node.js wake-gate port.
// Run: inboxspec conform --adapter "node conformance/ports/node/adapter.mjs"
import { createInterface } from "node:readline";
import { WakeGateError, WakePolicy } from "./wake-gate.mjs";
import * as peerDelivery from "./peer-delivery.mjs";

// Ports of further machines: each module exports NAME, FEATURES and runCase(config, steps).
const PORTS = Object.fromEntries([peerDelivery].map((port) => [port.NAME, port]));

const FEATURES = {
  "wake-gate": [
    "option:announce_requires_refusal",
    "option:cadence_from_allowed_wakes",
    "option:clamp_backwards_clock",
    "option:reject_empty_batch",
  ],
  ...Object.fromEntries(Object.values(PORTS).map((port) => [port.NAME, port.FEATURES])),
};

// One step of a wake-gate case; a typed error becomes {error: code} with the unchanged streak.
function applyStep(policy, { event, args = {} }) {
  try {
    switch (event) {
      case "decide":
        return { ...policy.decide(args.batch, { nowMs: args.now_ms, pluginPending: args.plugin_pending ?? false }), streak: policy.streak };
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
  if (Object.hasOwn(PORTS, machine)) return PORTS[machine].runCase(config, steps);
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

function handle(request) {
  if (request.cmd === "start") {
    return {
      ready: true, version: 1,
      implementation: { name: "inboxspec-node-example", version: "0.1.0", language: `javascript (node ${process.version})` },
      machines: Object.keys(FEATURES), features: FEATURES,
    };
  }
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
for await (const line of lines) {
  const request = JSON.parse(line);
  if (request.cmd === "stop") break;
  process.stdout.write(JSON.stringify(handle(request)) + "\n");
}
