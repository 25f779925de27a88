// inboxspec harness protocol v1 adapter for the Node.js example port.
// Run: inboxspec conform --adapter "node conformance/ports/node/adapter.mjs"
import { createInterface } from "node:readline";
import * as wakeGate from "./wake-gate.mjs";
import * as inboxRefresh from "./inbox-refresh.mjs";

// One line per machine: each module exports FEATURES and runCase(config, steps).
const MACHINES = {
  "wake-gate": wakeGate,
  "inbox-refresh": inboxRefresh,
};
const FEATURES = Object.fromEntries(Object.entries(MACHINES).map(([name, m]) => [name, m.FEATURES]));

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
    const port = Object.hasOwn(MACHINES, testCase.machine) ? MACHINES[testCase.machine] : null;
    if (!port) return { ...reply, skipped: { reason: `machine ${testCase.machine} not implemented` } };
    return { ...reply, result: port.runCase(testCase.config, testCase.steps) };
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
