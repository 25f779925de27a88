#!/usr/bin/env node
// @ts-check
// inboxspec harness protocol v1 adapter for the Node.js example port.
// Run: inboxspec conform --adapter "node conformance/ports/node/adapter.mjs"
// Each machine module maps the protocol's events onto its seed-named API (README.md has the table).
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import * as wakeGate from "./wake-gate.mjs";
import * as peerDelivery from "./peer-delivery.mjs";
import * as idleSubscriptions from "./idle-subscriptions.mjs";
import * as writerProofs from "./writer-proofs.mjs";
import * as inboxRefresh from "./inbox-refresh.mjs";
import * as host from "./host.mjs";
import { toJson } from "./protocol.mjs";

/** @typedef {import("./protocol.mjs").Step} Step */
/**
 * What adapter.mjs needs of a machine module.
 * @typedef {object} MachinePort
 * @property {readonly string[]} FEATURES
 * @property {(config: Record<string, unknown>, steps: Step[]) => object} runCase
 */
/** @typedef {Record<string, unknown>} Reply */

// The package's own name and version name the implementation in the start reply.
const PACKAGE = /** @type {{ name: string, version: string }} */ (
  JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8")));

/** @type {Record<string, MachinePort>} One line per machine: each module exports FEATURES and runCase(config, steps). */
const MACHINES = {
  "wake-gate": wakeGate,
  "peer-delivery": peerDelivery,
  "idle-subscriptions": idleSubscriptions,
  "writer-proofs": writerProofs,
  "inbox-refresh": inboxRefresh,
  "host": host,
};
const FEATURES = Object.fromEntries(Object.entries(MACHINES).map(([name, m]) => [name, m.FEATURES]));

/**
 * PROTO-MAL-1/2: a request that cannot be run still gets one reply, echoing seq and id when readable.
 * @param {any} request @param {string} message
 * @returns {Reply}
 */
function errored(request, message) {
  const seq = request?.seq ?? null;
  const id = typeof request?.case?.id === "string" ? request.case.id : "";
  return { seq, id, errored: { message } };
}

/** @param {unknown} v @returns {v is Record<string, any>} */
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * Where a run request breaks run.schema.json, or null (PROTO-MAL-2).
 * @param {Record<string, any>} request
 * @returns {string | null}
 */
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

/** @param {unknown} request @returns {Reply} */
function handle(request) {
  if (!isObject(request)) return errored(null, "request is not a JSON object");
  if (request.cmd === "start") {
    return {
      ready: true, version: 1,
      implementation: { name: PACKAGE.name, version: PACKAGE.version, language: `javascript (node ${process.version})` },
      machines: Object.keys(FEATURES), features: FEATURES,
    };
  }
  if (request.cmd !== "run") return errored(request, `unknown command ${JSON.stringify(request.cmd)}`);
  const problem = runRequestProblem(request);
  if (problem) return errored(request, `malformed run request: ${problem}`);
  const { seq, case: testCase } = request;
  const reply = { seq, id: testCase.id };
  try {
    const port = Object.hasOwn(MACHINES, testCase.machine) ? MACHINES[testCase.machine] : null;
    if (!port) return { ...reply, skipped: { reason: `machine ${testCase.machine} not implemented` } };
    // PROTO-FIX-2: the runner's materialised fixture travels with the config.
    const config = typeof testCase.fixture_dir === "string" ? { ...testCase.config, fixture_dir: testCase.fixture_dir } : testCase.config;
    return { ...reply, result: port.runCase(config, testCase.steps) };
  } catch (error) {
    return { ...reply, errored: { message: String(error), context: { stack: error instanceof Error ? error.stack : undefined } } };
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) { // every line is a request, a blank one too (PROTO-MAL-1)
  let request;
  try {
    request = JSON.parse(line);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    process.stdout.write(JSON.stringify(errored(null, `request is not JSON: ${why}`)) + "\n");
    continue;
  }
  if (isObject(request) && request.cmd === "stop") break;
  // JSON.stringify escapes a lone surrogate as \udXXX, so the line stays UTF-8 (PROTO-MAL-3).
  process.stdout.write(toJson(handle(request)) + "\n");
}
