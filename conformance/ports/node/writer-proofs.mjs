// @ts-check
// The writer proofs (spec/writer-proofs.md) in plain JavaScript for Node 20, no dependencies.
// It measures the runner's materialised fixtures with its own filesystem code (node:fs, node:crypto).
// The refusal is seed 002's `PlacementWriterContextError`, with its fields, defaults and message.
//
// The event names, arguments, defaults, config keys, options and the swap moments come from the
// interface data (interface/writer-proofs.interface.json, a copy of spec/writer-proofs.interface.json);
// the seed's typed vocabularies below are checked against it when the module loads.
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { types } from "node:util";

import {
  agrees, configKeys, eventOf, loadInterface, optionNames, unknownArguments, vocabulary, withConfigDefaults, withDefaults,
} from "./interface-data.mjs";
import { CodedError, runSteps } from "./protocol.mjs";

const INTERFACE = loadInterface("writer-proofs");
const OPTIONS = optionNames(INTERFACE);
export const FEATURES = OPTIONS.map((name) => `option:${name}`);

/** The root categories a refusal names (WRITER-CAT). */
export const PLACEMENT_WRITER_ROOT_CATEGORIES = /** @type {const} */ (
  ["running CLI", "setup receipt", "declared writer", "active locator", "home floor", "writer renewal"]);
Object.freeze(PLACEMENT_WRITER_ROOT_CATEGORIES);
/** @typedef {(typeof PLACEMENT_WRITER_ROOT_CATEGORIES)[number]} PlacementWriterRootCategory */
/** The cause classes a refusal names. */
export const PLACEMENT_WRITER_CAUSE_CLASSES = /** @type {const} */ (["missing", "changed", "unavailable"]);
Object.freeze(PLACEMENT_WRITER_CAUSE_CLASSES);
/** @typedef {(typeof PLACEMENT_WRITER_CAUSE_CLASSES)[number]} PlacementWriterCauseClass */
/** @typedef {"initial" | "active"} PlacementWriterContextPhase */
/** @typedef {"pending" | "staging"} SharedWriterRenewalState */
/** @typedef {keyof typeof FAILURE_DETAILS} SyncPlacementWriterFailureDetail */
/** @type {readonly string[]} */
const CATEGORIES = PLACEMENT_WRITER_ROOT_CATEGORIES;
/** @type {readonly string[]} */
const CAUSES = PLACEMENT_WRITER_CAUSE_CLASSES;
const FAILURE_DETAILS = {
  "below-minimum": "release is below 0.21.0",
  "wrong-package": "package is not @staix/agent-mem",
  "writable-runtime": "runtime code is group- or world-writable",
  unreadable: "runtime files are unreadable or missing",
  "invalid-version": "package version is not a supported plain release",
  "invalid-inventory": "root inventory is invalid or duplicated",
  "unsafe-runtime": "runtime files have unsafe types or symlinks",
  "missing-runtime": "required bin/amem.js or src/index.ts is missing",
  bound: "inventory exceeds a supported bound",
  changed: "install changed during measurement",
};
const RENEWAL_MESSAGES = {
  pending: "Shared writer revision is pending; finish or roll back the writer renewal with a compatible release, then run amem migrate --sync-placement --dry-run.",
  staging: "Shared writer revision is staging; wait for the writer renewal to finish or roll it back with a compatible release, then run amem migrate --sync-placement --dry-run.",
};
// WARNING: the seed's typed vocabularies above are literal, for its declarations; each must equal
// the interface data, which this checks when the module loads.
agrees("PLACEMENT_WRITER_ROOT_CATEGORIES", PLACEMENT_WRITER_ROOT_CATEGORIES, vocabulary(INTERFACE, "categories"));
agrees("PLACEMENT_WRITER_CAUSE_CLASSES", PLACEMENT_WRITER_CAUSE_CLASSES, vocabulary(INTERFACE, "causes"));
agrees("the failure details", FAILURE_DETAILS, INTERFACE.vocabularies.details);
agrees("the renewal messages", RENEWAL_MESSAGES, INTERFACE.vocabularies.renewal_messages);
agrees("the renewal states", Object.keys(RENEWAL_MESSAGES), vocabulary(INTERFACE, "renewal_states"));
const PLACEHOLDER = "{fixture}";
const MAX_SAFE = 2n ** 53n - 1n;
const MAX_ROOTS = 32, MAX_ENTRIES = 20000, MAX_BYTES = 64 * 1024 * 1024, MAX_DEPTH = 16, MAX_JSON_FILE_BYTES = 1024 * 1024; // WRITER-JSON-3; WARNING: impl/writer_fs.py's is the same number
// WARNING: PROTO-FIX-3's limits on a fixture path, also written in machines/fixtures.py and
// spec/conformance-protocol.md; change them together.
const MAX_PATH_BYTES = 1024, MAX_PATH_DEPTH = 32, MAX_COMPONENT_BYTES = 255;
/** @type {readonly SyncPlacementWriterFailureDetail[]} */
const PRECEDENCE = ["bound", "unsafe-runtime", "unreadable", "wrong-package", "invalid-version", "below-minimum", "missing-runtime", "writable-runtime"];
agrees("the detail precedence", PRECEDENCE, vocabulary(INTERFACE, "detail_precedence")); // WRITER-MEAS-4
const { O_RDONLY, O_NOFOLLOW = 0, O_NONBLOCK = 0, O_DIRECTORY = 0 } = fs.constants;
/** @param {object} object @param {PropertyKey} key @returns {boolean} */
const own = (object, key) => Object.prototype.hasOwnProperty.call(object, key);

// -- errors -------------------------------------------------------------------------------------
/** @typedef {"invalid_config" | "invalid_argument" | "invalid_roots" | "no_context" | "fences_not_held"} WriterProofsErrorCode */
/** @extends {CodedError<WriterProofsErrorCode>} */
class WriterProofsError extends CodedError {}

/**
 * WRITER-MSG: the refusal's message, from its fields.
 * @param {PlacementWriterRootCategory} category @param {PlacementWriterCauseClass} cause
 * @param {PlacementWriterContextPhase} phase @param {SyncPlacementWriterFailureDetail | undefined} detail
 * @param {SharedWriterRenewalState | undefined} renewalState
 * @returns {string}
 */
function writerContextMessage(category, cause, phase, detail, renewalState) {
  if (category === "writer renewal") return RENEWAL_MESSAGES[renewalState === "staging" ? "staging" : "pending"];
  if (category === "active locator") return `Sync placement initial root locator is ${cause} (active locator category); have the person inspect sync-placement-writer-roots.json and the matching activation metadata with a compatible recovery release, then run amem migrate --sync-placement --dry-run.`;
  if (category === "home floor") return `Sync placement reader-floor proof is ${cause} (home floor category); have the person inspect formats.json and use a reader compatible with its recorded floor, then run amem migrate --sync-placement --dry-run.`;
  const clause = detail ? `; ${FAILURE_DETAILS[detail]}` : "";
  if (phase === "initial") return `Sync placement initial writer proof is ${cause} (${category} category${clause}); ${category === "setup receipt" ? "upgrade or repair the managed amem install and its host exact pin, then rerun amem setup <target> --apply" : "upgrade or repair the amem install and its host exact pin"}. Declare the complete writer roots and rerun amem migrate --sync-placement --dry-run.`;
  return `Sync placement writer proof is ${cause} (${category} category${clause}); restore the inventoried install, or have the person run amem migrate --sync-placement --dry-run and --apply with the complete --writer-root inventory after installing the required 0.22.0 home floor.`;
}

export class SharedWriterRevisionError extends Error {
  /** @param {unknown} code anything but "staging" is "pending" */
  constructor(code) {
    /** @type {SharedWriterRenewalState} */
    const state = code === "staging" ? "staging" : "pending";
    super(RENEWAL_MESSAGES[state]);
    this.code = state;
  }
}
/** Why a sync placement may not proceed: a root category, a cause class, the phase, and detail. */
export class PlacementWriterContextError extends Error {
  /**
   * @param {PlacementWriterRootCategory} category
   * @param {PlacementWriterCauseClass} causeClass
   * @param {PlacementWriterContextPhase} [phase]
   * @param {SyncPlacementWriterFailureDetail} [detail]
   * @param {SharedWriterRenewalState} [renewalState]
   */
  constructor(category, causeClass, phase = "active", detail = undefined, renewalState = undefined) {
    super(writerContextMessage(category, causeClass, phase, detail, renewalState));
    this.name = "PlacementWriterContextError";
    /** @readonly */ this.category = category;
    /** @readonly */ this.causeClass = causeClass;
    /** @readonly */ this.phase = phase;
    /** @readonly */ this.detail = detail;
    /** @readonly */ this.renewalState = renewalState;
  }
  /** The protocol's `refusal` object (WRITER-IF). */
  toJSON() {
    return { category: this.category, cause: this.causeClass, phase: this.phase, detail: this.detail ?? null, renewal_state: this.renewalState ?? null, message: this.message };
  }
}
class WriterMeasurementError extends Error {
  /** @param {SyncPlacementWriterFailureDetail} detail @param {number | null} [rootIndex] */
  constructor(detail, rootIndex = null) { super(`writer measurement failed: ${detail}`); this.detail = detail; this.rootIndex = rootIndex; this.code = detail === "changed" ? "changed" : "failed"; }
}
/**
 * @param {PlacementWriterRootCategory} category @param {PlacementWriterCauseClass} cause
 * @param {PlacementWriterContextPhase} [phase] @param {SyncPlacementWriterFailureDetail} [detail]
 */
const fail = (category, cause, phase = "active", detail = undefined) => new PlacementWriterContextError(category, cause, phase, detail);

// WRITER-SAFE-1: a genuine instance (not a proxy), fields read from own data properties only.
/** @param {object} error @param {string} name @returns {unknown} */
function ownValue(error, name) {
  const field = Object.getOwnPropertyDescriptor(error, name);
  return field && "value" in field ? field.value : undefined;
}
/**
 * @template {abstract new (...args: any) => any} C
 * @param {unknown} error @param {C} Class
 * @returns {error is InstanceType<C>}
 */
const genuine = (error, Class) => error !== null && typeof error === "object" && !types.isProxy(error) && error instanceof Class;

/**
 * WRITER-SAFE: a refusal built only from a genuine error's own data fields; anything else is `unavailable`.
 * @param {unknown} error @param {string} category @param {PlacementWriterContextPhase} [phase]
 * @returns {PlacementWriterContextError}
 */
export function safeRefusal(error, category, phase = "active") {
  if (genuine(error, SharedWriterRevisionError)) {
    const code = ownValue(error, "code");
    if (code === "pending" || code === "staging") return new PlacementWriterContextError("writer renewal", "unavailable", phase, undefined, code);
  }
  if (genuine(error, PlacementWriterContextError)) {
    const ownCategory = ownValue(error, "category"), cause = ownValue(error, "causeClass");
    if (isCategory(ownCategory) && isCause(cause)) {
      const detail = ownValue(error, "detail"), state = ownValue(error, "renewalState");
      return new PlacementWriterContextError(ownCategory, cause, phase, isFailureDetail(detail) ? detail : undefined,
        state === "pending" || state === "staging" ? state : undefined);
    }
  }
  return new PlacementWriterContextError(isCategory(category) ? category : "declared writer", "unavailable", phase);
}

/** @param {unknown} v @returns {v is PlacementWriterRootCategory} */
const isCategory = (v) => typeof v === "string" && CATEGORIES.includes(v);
/** @param {unknown} v @returns {v is PlacementWriterCauseClass} */
const isCause = (v) => typeof v === "string" && CAUSES.includes(v);
/** @param {unknown} v @returns {v is SyncPlacementWriterFailureDetail} */
const isFailureDetail = (v) => typeof v === "string" && own(FAILURE_DETAILS, v);

/**
 * @param {unknown} error
 * @returns {{ code: "changed" | "failed", detail: SyncPlacementWriterFailureDetail, rootIndex: number | undefined } | undefined}
 */
function extractFailure(error) {
  if (!genuine(error, WriterMeasurementError)) return undefined;
  const detail = ownValue(error, "detail"), index = ownValue(error, "rootIndex");
  if (!isFailureDetail(detail)) return undefined;
  return { code: detail === "changed" ? "changed" : "failed", detail, rootIndex: Number.isInteger(index) && /** @type {number} */ (index) >= 0 ? /** @type {number} */ (index) : undefined };
}

// -- canonical JSON and order (WRITER-JSON-*) ----------------------------------------------------
/** @param {string} a @param {string} b */
const byCodePoint = (a, b) => Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
/** @param {unknown} value @returns {unknown} */
function sortKeys(value) {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object") {
    const record = /** @type {Record<string, unknown>} */ (value);
    return Object.fromEntries(Object.keys(record).sort(byCodePoint).map((k) => [k, sortKeys(record[k])]));
  }
  return value;
}
/** WRITER-JSON: keys sorted by code point, no spaces. @param {unknown} value @returns {string} */
export const canonicalJSON = (value) => JSON.stringify(sortKeys(value));
// WRITER-JSON-3: at most MAX_JSON_DEPTH nested arrays and objects, counted before parsing; a string is skipped whole.
// WARNING: impl/writer_fs.py has the same MAX_JSON_DEPTH.
const MAX_JSON_DEPTH = 64;
/** @param {string} text */
function checkJsonDepth(text) { // a loop, not a regular expression: a long string must not exhaust the regex stack
  let depth = 0, inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) { if (c === 0x5c) i++; else if (c === 0x22) inString = false; }
    else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) { if (++depth > MAX_JSON_DEPTH) throw new Error("JSON nested too deep"); }
    else if (c === 0x5d || c === 0x7d) depth--;
  }
}
/** @param {string} key @param {unknown} value @returns {unknown} */
const finiteNumbers = (key, value) => { if (typeof value === "number" && !Number.isFinite(value)) throw new Error("a number beyond the range of a double"); return value; };
/** @param {Uint8Array} buffer @returns {unknown} */
function strictJson(buffer) {
  if (buffer.length > MAX_JSON_FILE_BYTES) throw new Error("a JSON file longer than 1 MiB");
  if (buffer.length >= 3 && buffer[0] === 0xef && buffer[1] === 0xbb && buffer[2] === 0xbf) throw new Error("a byte order mark is not JSON");
  const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(buffer);
  checkJsonDepth(text);
  return JSON.parse(text, finiteNumbers);
}
/** @param {unknown} v @returns {v is Record<string, any>} */
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * WRITER-VER-1: a plain release as three BigInts, or null.
 * @param {unknown} text
 * @returns {[bigint, bigint, bigint] | null}
 */
export function parseRelease(text) {
  if (typeof text !== "string" || text.length > 50) return null;
  const match = /^(0|[1-9][0-9]{0,15})\.(0|[1-9][0-9]{0,15})\.(0|[1-9][0-9]{0,15})$/.exec(text);
  if (!match) return null;
  const numbers = /** @type {[bigint, bigint, bigint]} */ (match.slice(1, 4).map((n) => BigInt(n)));
  return numbers.some((n) => n > MAX_SAFE) ? null : numbers;
}
/** @param {readonly bigint[]} a @param {readonly bigint[]} b */
function compareRelease(a, b) {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

// -- measuring a root (WRITER-MEAS-*) ---------------------------------------------------------------
class Bound extends Error {}
/** @typedef {{ path: string, kind: "dir" | "file", mode: number, size: bigint, signature: string }} WalkEntry */
/** @typedef {{ root: string, writerId: string, version: string | null, pin: string }} MeasuredRoot */
/** @typedef {{ writerId: string, version: string | null, pin: string }} Writer */
/** @typedef {{ roots: MeasuredRoot[], writers: Writer[] }} Measurement */
/** @param {import("node:fs").BigIntStats} st */
const signature = (st) => [st.mode, st.size, st.ino, st.dev, st.mtimeNs, st.ctimeNs, st.nlink].join(",");
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** @param {string} root @returns {{ entries: WalkEntry[], faults: Set<SyncPlacementWriterFailureDetail> }} */
function walk(root) {
  /** @type {Set<SyncPlacementWriterFailureDetail>} */
  const faults = new Set();
  /** @type {WalkEntry[]} */
  const entries = [];
  let total = 0n;
  /** @type {[string, number][]} */
  const stack = [[".", 0]];
  while (stack.length) {
    const [rel, depth] = /** @type {[string, number]} */ (stack.pop());
    const full = rel === "." ? root : path.join(root, rel);
    let st;
    try { st = fs.lstatSync(full, { bigint: true }); } catch { faults.add("unreadable"); continue; }
    const mode = Number(st.mode & 0o7777n);
    if (st.isDirectory()) entries.push({ path: rel, kind: "dir", mode, size: 0n, signature: signature(st) });
    else if (st.isFile()) {
      entries.push({ path: rel, kind: "file", mode, size: st.size, signature: signature(st) });
      total += st.size;
      if (st.nlink > 1n) faults.add("unsafe-runtime");
    } else { faults.add("unsafe-runtime"); continue; }
    if (entries.length > MAX_ENTRIES || total > BigInt(MAX_BYTES)) throw new Bound();
    if (mode & 0o7000) faults.add("unsafe-runtime");
    if (mode & 0o022) faults.add("writable-runtime");
    if (st.isDirectory()) {
      /** @type {Buffer[]} */
      let names;
      try { names = fs.readdirSync(full, { encoding: "buffer" }); } catch { faults.add("unreadable"); continue; }
      const children = [];
      for (const raw of names) {
        let name;
        try { name = utf8.decode(raw); } catch { faults.add("unsafe-runtime"); continue; }
        children.push(rel === "." ? name : `${rel}/${name}`);
      }
      if (children.length && depth + 1 > MAX_DEPTH) throw new Bound();
      children.sort(byCodePoint).reverse();
      for (const child of children) stack.push([child, depth + 1]);
    }
  }
  return { entries, faults };
}

/**
 * `relative` ("/"-separated) opened with `flags` from `root`, one directory at a time, none of them
 * followed if a link (WRITER-MEAS-7): each directory is opened without following a link, and the
 * next name is looked up in it through /proc/self/fd (Node has no openat). Throws ELOOP for a link.
 * @param {string} root @param {string} relative @param {number} flags @returns {number}
 */
function openBeneath(root, relative, flags) {
  const parts = relative.split("/");
  const name = /** @type {string} */ (parts.pop());
  let fd = fs.openSync(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  try {
    for (const part of parts) {
      const inner = fs.openSync(`/proc/self/fd/${fd}/${part}`, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      fs.closeSync(fd);
      fd = inner;
    }
    return fs.openSync(`/proc/self/fd/${fd}/${name}`, flags);
  } finally { fs.closeSync(fd); }
}

/** @param {string} root @param {WalkEntry} entry @returns {Buffer | "changed" | null} */
function readFile(root, entry) {
  /** @type {number} */
  let fd;
  try { fd = openBeneath(root, entry.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK); } catch { return null; }
  try {
    const st = fs.fstatSync(fd, { bigint: true });
    if (!st.isFile() || signature(st) !== entry.signature) return "changed";
    // One byte past the walk's size at most (WRITER-MEAS-7): a file grown since is "changed"
    // without reading what it grew by.
    const chunks = [];
    const buffer = Buffer.alloc(1 << 20);
    let left = Number(entry.size) + 1;
    while (left > 0) {
      const n = fs.readSync(fd, buffer, 0, Math.min(buffer.length, left), null);
      if (n === 0) break;
      chunks.push(Buffer.from(buffer.subarray(0, n)));
      left -= n;
    }
    const data = Buffer.concat(chunks);
    if (BigInt(data.length) !== entry.size || signature(fs.fstatSync(fd, { bigint: true })) !== entry.signature) return "changed";
    return data;
  } catch {
    return null;
  } finally { fs.closeSync(fd); }
}

/** @param {Buffer | undefined} packageBytes @returns {[SyncPlacementWriterFailureDetail | null, string | null]} */
function identity(packageBytes) {
  if (!packageBytes) return ["unreadable", null];
  let data;
  try { data = strictJson(packageBytes); } catch { return ["unreadable", null]; }
  if (!isObject(data) || data.name !== "@staix/agent-mem") return ["wrong-package", null];
  const release = parseRelease(data.version);
  if (!release) return ["invalid-version", null];
  if (compareRelease(release, [0n, 21n, 0n]) < 0) return ["below-minimum", null];
  return [null, data.version];
}

/** @param {import("node:crypto").BinaryLike} data */
const sha256 = (data) => crypto.createHash("sha256").update(data).digest("hex");

/** @param {string} name @param {string | null} version @param {[string, ...unknown[]][]} entries */
function pinOf(name, version, entries) {
  const sorted = [...entries].sort((a, b) => byCodePoint(a[0], b[0]));
  return "sha256:" + sha256(Buffer.from(canonicalJSON({ format: "amem-writer-pin/1", package: name, version, entries: sorted }), "utf8"));
}

// WRITER-IF-6: a case's swap armed for a moment of the next root measurement that reaches it.
// The moments of the interface data's swap_moments vocabulary.
// WARNING: machines/writer_proofs_driver.py (ArmedSwap) performs them at the same points.
const SWAP_MOMENTS = vocabulary(INTERFACE, "swap_moments");
/** @type {{dir: string, first: string, second: string, during: string} | null} */
let armedSwap = null;
/** @param {string} moment */
function performArmedSwap(moment) {
  if (!armedSwap || armedSwap.during !== moment) return;
  const { dir, first, second } = armedSwap;
  armedSwap = null;
  try { swapPaths(dir, first, second); } catch { /* neither path exists, or one is outside the fixture: nothing moves */ }
}

/** @param {string} realRoot @returns {MeasuredRoot} */
function measureRoot(realRoot) {
  let walked;
  try { walked = walk(realRoot); } catch (error) { if (error instanceof Bound) throw new WriterMeasurementError("bound"); throw error; }
  const { entries, faults } = walked;
  performArmedSwap("before_read");
  /** @type {Map<string, Buffer>} */
  const contents = new Map();
  const blocked = () => faults.has("unsafe-runtime") || faults.has("unreadable");
  const changed = new Set(); // WRITER-MEAS-4: a file that is not the walk's is reported only without a ranked fault
  if (!blocked()) {
    for (const entry of entries) {
      if (entry.kind !== "file") continue;
      const data = readFile(realRoot, entry);
      if (data === null) faults.add("unreadable"); else if (data === "changed") changed.add(entry.path); else contents.set(entry.path, data);
    }
  }
  let version = null;
  if (!blocked() && !changed.has("package.json")) {
    const [fault, found] = identity(contents.get("package.json"));
    if (fault) faults.add(fault);
    version = found;
  }
  const files = new Set(entries.filter((e) => e.kind === "file").map((e) => e.path));
  if (!files.has("bin/amem.js") || !files.has("src/index.ts")) faults.add("missing-runtime");
  for (const detail of PRECEDENCE) if (faults.has(detail)) throw new WriterMeasurementError(detail);
  if (changed.size) throw new WriterMeasurementError("changed");
  /** @type {[string, ...unknown[]][]} */
  const inventory = entries.map((e) => [e.path, e.kind, e.mode, Number(e.size), e.kind === "file" ? sha256(/** @type {Buffer} */ (contents.get(e.path))) : ""]);
  performArmedSwap("before_restat");
  let again;
  try { again = walk(realRoot).entries; } catch (error) { if (error instanceof Bound) throw new WriterMeasurementError("changed"); throw error; }
  /** @param {WalkEntry[]} list */
  const key = (list) => list.map((e) => `${e.path}\u0000${e.signature}`).sort().join("\u0001");
  if (key(again) !== key(entries)) throw new WriterMeasurementError("changed");
  return { root: realRoot, writerId: realRoot, version, pin: pinOf("@staix/agent-mem", version, inventory) };
}

// A string holding a surrogate that is not half of a pair: it has no UTF-8 form.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** @param {unknown} p @returns {string} */
function realPath(p) {
  if (typeof p !== "string" || !path.isAbsolute(p) || p.includes("\0")) throw new Error("not an absolute path");
  // WRITER-MEAS-2: a name holding a lone surrogate has no UTF-8 form and names no file (Node would
  // resolve the path with U+FFFD in its place).
  if (LONE_SURROGATE.test(p)) throw new Error("a path holding a lone surrogate names no file");
  return fs.realpathSync.native(p); // the kernel's resolution: /x/file/.. is ENOTDIR (WRITER-MEAS-2)
}

/** @param {readonly string[]} roots @returns {Measurement} */
function measureWriters(roots) {
  if (!roots.length) throw new WriterMeasurementError("invalid-inventory");
  if (roots.length > MAX_ROOTS) throw new WriterMeasurementError("bound");
  /** @type {MeasuredRoot[]} */
  const rows = [];
  /** @type {Set<string>} */
  const seen = new Set();
  roots.forEach((root, index) => {
    if (typeof root !== "string" || !root || !path.isAbsolute(root) || root.includes("\0")) throw new WriterMeasurementError("invalid-inventory", index);
    let real;
    try { real = realPath(root); } catch { throw new WriterMeasurementError("unreadable", index); }
    if (seen.has(real)) throw new WriterMeasurementError("invalid-inventory", index);
    seen.add(real);
    let st;
    try { st = fs.lstatSync(real); } catch { throw new WriterMeasurementError("unreadable", index); }
    if (!st.isDirectory()) throw new WriterMeasurementError("invalid-inventory", index);
    try { rows.push(measureRoot(real)); } catch (error) {
      if (error instanceof WriterMeasurementError) throw new WriterMeasurementError(error.detail, index);
      throw error;
    }
  });
  rows.sort((a, b) => byCodePoint(a.root, b.root));
  return { roots: rows, writers: rows.map(({ writerId, version, pin }) => ({ writerId, version, pin })) };
}

// -- the home's files (WRITER-HOME-*) ----------------------------------------------------------------
/** @param {string} file @returns {unknown} */
function readHomeJson(file) {
  // WRITER-HOME-5: a path holding a lone surrogate names no file (Node would open the path with
  // U+FFFD in its place); NUL is refused by openSync itself.
  if (LONE_SURROGATE.test(file)) throw new Error("a path holding a lone surrogate names no file");
  const fd = fs.openSync(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  try {
    if (!fs.fstatSync(fd).isFile()) throw new Error("not a regular file");
    const buffer = Buffer.alloc(MAX_JSON_FILE_BYTES + 1);
    let length = 0;
    // One byte past the bound at most, which strictJson refuses.
    while (length < buffer.length) {
      const n = fs.readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
    }
    return strictJson(buffer.subarray(0, length));
  } finally { fs.closeSync(fd); }
}
// WRITER-HOME-5: the home path as given, then "/" and the name; never path.join, which would shorten
// "home/link/.." or "home/file/.." by its text where the kernel resolves (or refuses) it.
/** @param {string} home @param {string} name */
const homeFile = (home, name) => home.endsWith("/") ? home + name : `${home}/${name}`;
/** @param {unknown} error */
const absent = (error) => error instanceof Error && "code" in error && error.code === "ENOENT";

/** @param {string} home @returns {string[]} */
function readSetupWriterRoots(home) {
  let data;
  try { data = readHomeJson(homeFile(home, "setup-receipt.json")); } catch (error) { if (absent(error)) return []; throw error; }
  const roots = isObject(data) ? data.writerRoots : undefined;
  if (!Array.isArray(roots) || !roots.every((r) => typeof r === "string")) throw new Error("writerRoots must be a list of strings");
  return [...new Set(roots.map(realPath))].sort(byCodePoint);
}

/** @param {string} home @returns {string} */
function requireHomeFloor(home) {
  let data;
  try { data = readHomeJson(homeFile(home, "formats.json")); } catch (error) {
    throw new PlacementWriterContextError("home floor", absent(error) ? "missing" : "unavailable");
  }
  const floor = isObject(data) ? data.readerFloor : undefined;
  const release = parseRelease(floor);
  if (!release || compareRelease(release, [0n, 22n, 0n]) < 0) throw new PlacementWriterContextError("home floor", "unavailable");
  return floor;
}

/** @typedef {{ data: Record<string, unknown>, roots: string[] | null, renewal: SharedWriterRenewalState | null, writers: Writer[] }} Locator */
/** @param {string} home @returns {Locator} */
function readLocator(home) {
  const data = readHomeJson(homeFile(home, "sync-placement-writer-roots.json"));
  if (!isObject(data)) throw new Error("the locator is an object");
  const roots = own(data, "roots") ? data.roots : null;
  if (roots !== null && (!Array.isArray(roots) || !roots.every((r) => typeof r === "string"))) throw new Error("bad roots");
  const activation = data.activation;
  const renewal = isObject(activation) && own(activation, "renewal") ? activation.renewal : null;
  if (!isObject(activation) || ![null, "pending", "staging"].includes(renewal)) throw new Error("bad activation");
  const writers = own(data, "writers") ? data.writers : [];
  if (!Array.isArray(writers)) throw new Error("writers must be a list");
  for (const w of writers) {
    if (!isObject(w) || Object.keys(w).sort().join() !== "pin,version,writerId" || !Object.values(w).every((v) => typeof v === "string")) throw new Error("bad writer");
  }
  return { data, roots, renewal, writers: writers.map(({ writerId, version, pin }) => ({ writerId, version, pin })) };
}

/** @param {string} home @returns {{ roots: string[] | null, writers: Writer[], assertCurrent(): void }} */
function readEffective(home) {
  let first;
  try { first = readLocator(home); } catch (error) {
    if (absent(error)) return { roots: null, writers: [], assertCurrent() {} };
    throw new PlacementWriterContextError("active locator", "unavailable");
  }
  const text = canonicalJSON(first.data);
  return {
    roots: first.roots, writers: first.writers,
    assertCurrent() {
      let again;
      try { again = readLocator(home); } catch (error) {
        throw new PlacementWriterContextError("active locator", absent(error) ? "missing" : "unavailable");
      }
      if (again.renewal === "pending" || again.renewal === "staging") throw new SharedWriterRevisionError(again.renewal);
      if (canonicalJSON(again.data) !== text) throw new PlacementWriterContextError("active locator", "changed");
    },
  };
}

// -- the core (WRITER-REQ, CAT, COMP, INIT, ACT, PREV) -----------------------------------------------
/** @typedef {{ own: string, receipt: string[], roots: string[] }} RequiredRoots */
/** @typedef {{ attest_requires_fences: boolean, compare_writers_by_id: boolean }} WriterOptions */
/**
 * @typedef {object} WriterContext
 * @property {PlacementWriterContextPhase} phase
 * @property {Measurement} measurement
 * @property {() => { writers: Writer[], legacySyncQuiesced: boolean }} attest
 * @property {PlacementWriterContextError} [lastRefusal]
 */
/** @param {string} home @param {string} ownRoot @param {PlacementWriterContextPhase} [phase] @returns {RequiredRoots} */
function required(home, ownRoot, phase = "active") {
  let ownReal, receipt;
  try { ownReal = realPath(ownRoot); } catch { throw fail("running CLI", "unavailable", phase, "unreadable"); }
  try { receipt = readSetupWriterRoots(home); } catch { throw fail("setup receipt", "unavailable", phase, "unreadable"); }
  return { own: ownReal, receipt, roots: [...new Set([ownReal, ...receipt])].sort(byCodePoint) };
}
/** @param {string | undefined} root @param {RequiredRoots} needed @returns {PlacementWriterRootCategory} */
function rootCategory(root, needed) {
  if (root === needed.own) return "running CLI";
  return root && needed.receipt.includes(root) ? "setup receipt" : "declared writer";
}
/** @param {unknown} error @param {readonly string[]} roots @param {RequiredRoots} needed @param {PlacementWriterContextPhase} phase */
function measurementRefusal(error, roots, needed, phase) {
  const failure = extractFailure(error);
  let root;
  if (failure?.rootIndex !== undefined && failure.rootIndex < roots.length) { try { root = realPath(roots[failure.rootIndex]); } catch { root = undefined; } }
  return new PlacementWriterContextError(rootCategory(root, needed), failure?.code === "changed" ? "changed" : "unavailable", phase, failure?.detail ?? "unreadable");
}
/** @param {string} home @param {readonly string[]} roots @param {string} ownRoot @param {PlacementWriterContextPhase} [phase] @returns {Measurement} */
function measureComplete(home, roots, ownRoot, phase = "active") {
  const before = required(home, ownRoot, phase);
  let result;
  try { result = measureWriters(roots); } catch (error) { throw measurementRefusal(error, roots, before, phase); }
  if (!result.roots.some((row) => row.root === before.own)) throw fail("running CLI", "missing", phase);
  if (before.receipt.some((root) => !result.roots.some((row) => row.root === root))) throw fail("setup receipt", "missing", phase);
  const after = required(home, ownRoot, phase);
  if (after.own !== before.own) throw fail("running CLI", "changed", phase, "changed");
  if (canonicalJSON(after.receipt) !== canonicalJSON(before.receipt)) throw fail("setup receipt", "changed", phase, "changed");
  return result;
}
/** @param {Writer[]} current @param {Writer[]} expected @param {boolean} byId */
function writersDiffer(current, expected, byId) {
  /** @param {Writer[]} list */
  const encode = (list) => { const rows = list.map(({ writerId, version, pin }) => ({ writerId, version, pin })); if (byId) rows.sort((a, b) => byCodePoint(a.writerId, b.writerId)); return canonicalJSON(rows); };
  return encode(current) !== encode(expected);
}
/** @param {MeasuredRoot[]} rows @param {Writer[]} expected */
const changedRoot = (rows, expected) => rows.find((row) => !expected.some((old) => old.writerId === row.writerId && old.version === row.version && old.pin === row.pin))?.root;

/** @param {string} home @param {readonly string[]} roots @param {string} ownRoot @param {WriterOptions} options @returns {WriterContext} */
function initialContext(home, roots, ownRoot, options) {
  const selected = roots.length ? [...roots] : required(home, ownRoot, "initial").roots;
  const measurement = measureComplete(home, selected, ownRoot, "initial");
  const canonical = measurement.roots.map((row) => row.root);
  const floor = requireHomeFloor(home);
  /** @type {WriterContext} */
  const context = {
    phase: "initial", measurement,
    attest() {
      try {
        if (requireHomeFloor(home) !== floor) throw fail("home floor", "changed", "initial");
        const current = measureComplete(home, canonical, ownRoot, "initial");
        if (writersDiffer(current.writers, measurement.writers, options.compare_writers_by_id)) {
          throw fail(rootCategory(changedRoot(current.roots, measurement.writers), required(home, ownRoot, "initial")), "changed", "initial", "changed");
        }
        return { writers: current.writers, legacySyncQuiesced: true };
      } catch (error) { context.lastRefusal = safeRefusal(error, "declared writer", "initial"); throw context.lastRefusal; }
    },
  };
  return context;
}
/** @param {string} home @param {string} ownRoot @param {WriterOptions} options @returns {Measurement} */
function activeRead(home, ownRoot, options) {
  requireHomeFloor(home);
  const effective = readEffective(home);
  const roots = effective.roots;
  if (!roots) throw fail("active locator", "unavailable");
  const needed = required(home, ownRoot);
  if (!roots.includes(needed.own)) throw fail("running CLI", "missing");
  if (needed.receipt.some((root) => !roots.includes(root))) throw fail("setup receipt", "missing");
  const measurement = measureComplete(home, roots, ownRoot);
  if (writersDiffer(measurement.writers, effective.writers, options.compare_writers_by_id)) {
    throw fail(rootCategory(changedRoot(measurement.roots, effective.writers), needed), "changed", "active", "changed");
  }
  effective.assertCurrent();
  return measurement;
}
/** @param {string} home @param {string} ownRoot @param {WriterOptions} options @returns {WriterContext} */
function activeContext(home, ownRoot, options) {
  const measurement = activeRead(home, ownRoot, options);
  /** @type {WriterContext} */
  const context = {
    phase: "active", measurement,
    attest() {
      try { return { writers: activeRead(home, ownRoot, options).writers, legacySyncQuiesced: true }; }
      catch (error) { context.lastRefusal = safeRefusal(error, "active locator"); throw context.lastRefusal; }
    },
  };
  return context;
}
/** @param {string} home @param {string} ownRoot @param {readonly string[]} requested */
function preview(home, ownRoot, requested) {
  const effective = readEffective(home), mapped = effective.roots;
  if (!mapped) throw fail("active locator", "unavailable");
  const selected = requested.length ? [...requested] : mapped;
  const expected = effective.writers;
  let measurement;
  try { measurement = measureWriters(selected); } catch {
    return { complete: false, matches: false, roots: [], expected, missingCategories: ["declared writer"], differences: expected.map((row) => ({ writerId: row.writerId, state: "unverified" })), refusalCategory: "declared writer" };
  }
  const needed = required(home, ownRoot);
  /** @type {PlacementWriterRootCategory[]} */
  const missingCategories = [];
  if (!measurement.roots.some((row) => row.root === needed.own)) missingCategories.push("running CLI");
  if (needed.receipt.some((root) => !measurement.roots.some((row) => row.root === root))) missingCategories.push("setup receipt");
  const differences = expected.map((row) => {
    const actual = measurement.writers.find((value) => value.writerId === row.writerId);
    return { writerId: row.writerId, state: !actual ? "missing" : canonicalJSON(row) === canonicalJSON(actual) ? "unchanged" : "changed" };
  });
  for (const row of measurement.writers) if (!expected.some((value) => value.writerId === row.writerId)) differences.push({ writerId: row.writerId, state: "added" });
  const matches = missingCategories.length === 0 && differences.every((row) => row.state === "unchanged");
  const changed = measurement.roots.find((row) => { const old = expected.find((value) => value.writerId === row.writerId); return !old || old.pin !== row.pin || old.version !== row.version; });
  const refusalCategory = missingCategories[0] ?? (changed?.root === needed.own ? "running CLI" : changed && needed.receipt.includes(changed.root) ? "setup receipt" : "declared writer");
  return { complete: true, matches, roots: measurement.roots, expected, missingCategories, differences, refusalCategory };
}

// -- the session and the case driver (WRITER-IF-*) ---------------------------------------------------
const CONFIG_KEYS = configKeys(INTERFACE);
/** The keys a config must have (WRITER-IF-1), each a non-empty string. */
const REQUIRED_KEYS = INTERFACE.config.keys.filter((key) => key.required).map((key) => key.name);

/** @param {unknown} value @param {string} dir @returns {unknown} */
const substitute = (value, dir) => typeof value === "string" ? value.split(PLACEHOLDER).join(dir) : Array.isArray(value) ? value.map((v) => substitute(v, dir)) : value;
/** @param {unknown} value @param {string} dir @returns {unknown} */
function neutralise(value, dir) {
  if (typeof value === "string") return value === dir || value.startsWith(dir + "/") ? PLACEHOLDER + value.slice(dir.length) : value;
  if (Array.isArray(value)) return value.map((v) => neutralise(v, dir));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, neutralise(v, dir)]));
  return value;
}
/** @param {unknown} value @returns {string[]} */
function checkPaths(value) {
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) throw new WriterProofsError("invalid_roots", "roots must be a list of strings");
  return value;
}
// A fixture-relative path, walked without following a link (WRITING-AN-ADAPTER.md, "Threat model:
// case files and fixtures"): every component is a plain name, and every parent is a directory, not a
// symlink, checked with lstat right before the rename. Node has no renameat, so this is the check;
// nothing else changes the fixture while the adapter works on it. rename never follows the last
// component: a link is moved as itself.
/** @param {string} dir @param {string} relative @returns {string} */
function fixturePath(dir, relative) {
  const parts = relative.split("/");
  if (relative.startsWith("/") || relative.includes("\0") || parts.some((p) => p === "" || p === "." || p === "..")) throw new Error("not a fixture-relative path");
  // WRITER-IF-6: PROTO-FIX-3's limits too, as machines/fixtures.py's path_problem has them (a name past
  // 255 bytes was parked and then failed to rename, leaving the first path gone).
  if (/\p{Cs}/u.test(relative) || Buffer.byteLength(relative, "utf8") > MAX_PATH_BYTES || parts.length > MAX_PATH_DEPTH
      || parts.some((p) => Buffer.byteLength(p, "utf8") > MAX_COMPONENT_BYTES)) throw new Error("past PROTO-FIX-3's limits");
  let parent = dir;
  for (const part of parts.slice(0, -1)) {
    parent = path.join(parent, part);
    const info = fs.lstatSync(parent);
    if (!info.isDirectory()) throw new Error(`${parent} is not a directory (a link is never walked through)`);
  }
  return path.join(dir, ...parts);
}
/** Where a swap parks its first path (WRITER-IF-6): no fixture's path, and no swap's. */
const SWAP_PARKING = ".swap-parking";
/** @param {string} p */
const lexists = (p) => { try { fs.lstatSync(p); return true; } catch { return false; } };
/** @param {string} dir @param {string} first @param {string} second */
function swapPaths(dir, first, second) {
  const a = fixturePath(dir, first), b = fixturePath(dir, second), parking = path.join(dir, SWAP_PARKING);
  // WRITER-IF-6: one path, or one inside the other, is refused before anything moves (parking the
  // first would take the second with it).
  const firstParts = first.split("/"), secondParts = second.split("/");
  // The name the first path is parked under is no path of a swap: a later swap would delete it.
  if (firstParts[0] === SWAP_PARKING || secondParts[0] === SWAP_PARKING) throw new Error("the swap's own name");
  const shorter = Math.min(firstParts.length, secondParts.length);
  if (firstParts.slice(0, shorter).every((part, index) => part === secondParts[index])) throw new Error("one path, or one inside the other");
  const hasA = lexists(a), hasB = lexists(b);
  if (!hasA && !hasB) throw new Error("neither path exists");
  const recheck = () => { fixturePath(dir, first); fixturePath(dir, second); }; // parents unchanged by the last rename
  if (hasA) fs.renameSync(a, parking);
  if (hasB) { recheck(); fs.renameSync(b, a); }
  if (hasA) { recheck(); fs.renameSync(parking, b); }
}

/** @typedef {import("./protocol.mjs").Args} Args */
/** @typedef {import("./protocol.mjs").Step} Step */
/** @typedef {import("./protocol.mjs").CaseResult} CaseResult */

class Session {
  /** @param {unknown} config */
  constructor(config) {
    if (!isObject(config)) throw new WriterProofsError("invalid_config", "config must be an object");
    if (Object.keys(config).some((k) => !CONFIG_KEYS.includes(k))) throw new WriterProofsError("invalid_config", "unknown config key");
    for (const key of REQUIRED_KEYS) if (typeof config[key] !== "string" || !config[key]) throw new WriterProofsError("invalid_config", `${key} must be a non-empty string`);
    const { options } = withConfigDefaults(INTERFACE, config);
    if (!isObject(options) || Object.keys(options).some((k) => !OPTIONS.includes(k)) || Object.values(options).some((v) => typeof v !== "boolean")) throw new WriterProofsError("invalid_config", "bad options");
    /** @type {string} */
    this.dir = config.fixture_dir;
    this.home = /** @type {string} */ (substitute(config.home, this.dir));
    this.ownRoot = /** @type {string} */ (substitute(config.own_root, this.dir));
    /** @type {WriterOptions} */
    this.options = /** @type {WriterOptions} */ ({ ...Object.fromEntries(OPTIONS.map((name) => [name, false])), ...options });
    /** @type {WriterContext | null} */
    this.context = null;
    this.fences = false;
  }
  /** @param {string} event @param {Args} args its absent arguments at their defaults @returns {Record<string, unknown>} */
  body(event, args) {
    switch (event) {
      case "preview": return { preview: preview(this.home, this.ownRoot, checkPaths(substitute(args.requested, this.dir))) };
      case "initial": {
        const roots = checkPaths(substitute(args.roots, this.dir));
        this.context = null;
        this.context = initialContext(this.home, roots, this.ownRoot, this.options);
        return { measurement: this.context.measurement };
      }
      case "active":
        this.context = null;
        this.context = activeContext(this.home, this.ownRoot, this.options);
        return { measurement: this.context.measurement };
      case "attest":
        if (!this.context) throw new WriterProofsError("no_context", "attest needs a context");
        if (this.options.attest_requires_fences && !this.fences) throw new WriterProofsError("fences_not_held", "fences are not held");
        return { attestation: this.context.attest() };
      case "hold_fences": this.fences = true; return { fences: true };
      case "release_fences": this.fences = false; return { fences: false };
      case "swap_paths":
        if (typeof args.first !== "string" || typeof args.second !== "string") throw new WriterProofsError("invalid_argument", "two paths");
        if (own(args, "during")) {
          const during = args.during;
          if (typeof during !== "string" || !SWAP_MOMENTS.includes(during)) throw new WriterProofsError("invalid_argument", "bad moment");
          armedSwap = { dir: this.dir, first: args.first, second: args.second, during };
          return {};
        }
        try { swapPaths(this.dir, args.first, args.second); } catch { throw new WriterProofsError("invalid_argument", "swap failed"); }
        return {};
    }
    throw new WriterProofsError("invalid_argument", `unknown event ${event}`);
  }
  /** @param {Step} step @returns {Record<string, unknown>} */
  apply(step) {
    const event = step.event, args = own(step, "args") ? step.args : {};
    /** @type {Record<string, unknown>} */
    let body;
    try {
      const defined = typeof event === "string" ? eventOf(INTERFACE, event) : undefined;
      if (!defined) throw new Error(`unknown writer-proofs event ${event}`); // the case errors (PROTO-MAL-2)
      if (!isObject(args)) throw new WriterProofsError("invalid_argument", "args must be an object");
      if (unknownArguments(defined, args).length > 0) throw new WriterProofsError("invalid_argument", "extra argument");
      body = this.body(event, withDefaults(defined, args));
    } catch (error) {
      if (error instanceof WriterProofsError) body = { error: error.code };
      else if (error instanceof PlacementWriterContextError) body = { refusal: error.toJSON() };
      else if (error instanceof SharedWriterRevisionError) body = { renewal: { state: error.code, message: error.message } };
      else throw error;
    }
    const neutral = /** @type {Record<string, unknown>} */ (neutralise(JSON.parse(JSON.stringify(body)), this.dir));
    return { ...neutral, context: this.context ? this.context.phase : null };
  }
}

// A writer-proofs case; the runner has materialised config.fixture, and the adapter passes its
// directory as config.fixture_dir (PROTO-FIX-2).
/**
 * @param {Record<string, unknown>} config @param {Step[]} steps
 * @returns {CaseResult}
 */
export function runCase(config, steps) {
  const fixtureDir = isObject(config) ? config.fixture_dir : undefined;
  // WRITER-IF-1: fixture_dir is the runner's, given only beside a fixture; a case's own is refused.
  if (isObject(config) && own(config, "fixture_dir") && !own(config, "fixture")) return { config_error: "invalid_config" };
  // Without a fixture (a config-error case, say) paths resolve inside an empty directory of the
  // port's own, removed when the case ends: nothing of a run is left behind (PROTO-FIX-1).
  const empty = typeof fixtureDir === "string" ? null : fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "inboxspec-empty-")));
  try {
    armedSwap = null;
    return runSteps(WriterProofsError, () => new Session(isObject(config) ? { ...config, fixture_dir: empty ?? fixtureDir } : config),
      (session, step) => session.apply(step), steps);
  } finally {
    // A step may have swapped paths inside it, never out of it: a plain recursive removal suffices.
    if (empty !== null) fs.rmSync(empty, { recursive: true, force: true });
  }
}
