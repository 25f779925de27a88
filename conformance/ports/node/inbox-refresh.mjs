// @ts-check
// The inbox refresh cache (spec/inbox-refresh.md), a dependency-free port for Node.js 20,
// with the fake inbox source and fake runner that a case describes (spec: Interface).
// Requirement IDs in comments point into the spec. The cache is seed 002's `InboxCache`, and
// its `invalidate` takes the seed's argument: a boolean, or an `InboxInvalidation` record.
// Time is data: the cache's elapsed time is the `nowMs` its caller passes, never a clock of its own.
// It reads two clocks as the seed does (REFRESH-CLOCK-1..3): the wall, `nowMs` plus an offset that
// `setWall` moves (forward or back), and the monotonic clock, `nowMs` itself, or the wall when the
// host gives only `now` (`monotonicClock: false`).

import {
  agrees, configDefault, configKeys, eventOf, loadInterface, optionNames, recordFields, unknownArgumentCode,
  vocabulary, withConfigDefaults, withDefaults, withRecordDefaults,
} from "./interface-data.mjs";
import { CodedError, runSteps } from "./protocol.mjs";

export const NAME = "inbox-refresh";
// The config keys, the job script and computation records, each event's arguments, defaults and
// codes, the outcomes and options, and the scripted world's start: the interface data
// (interface/inbox-refresh.interface.json, a copy of spec/inbox-refresh.interface.json).
const INTERFACE = loadInterface(NAME);
export const FEATURES = ["option:refreshing_only_when_runnable", "option:read_failure_backs_off", "option:reject_negative_added"];

const SPACING_MS = 30_000; // REFRESH-DEF-1
const MAX_BACKOFF_MS = 300_000;
const MAX_TIME_MS = 253_402_300_799_999;
const MAX_CALLERS = 64;
const OVERFLOW_ID = "inbox:more";
const CAPACITY_ID = "capacity:proposal";
const WORKER_CHANGED = "inbox worker changed; restart acon serve";
const LOG_FAILED = "amem: inbox refresh failed; bounded backoff applies";
const TITLE = { refreshing: "Memory inbox is refreshing", unavailable: "Memory inbox is unavailable" };
const DETAIL = {
  refreshing: "Pending items will appear when the refresh finishes.",
  unavailable: "Refresh is paused; it will retry after the cooldown.",
};
const OPTIONS = optionNames(INTERFACE);
const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const OUTCOMES = vocabulary(INTERFACE, "outcomes");
const CANCELS = vocabulary(INTERFACE, "cancels");
const SCRIPT_KEYS = recordFields(INTERFACE, "job_script").map((field) => field.name);
const CONFIG_KEYS = configKeys(INTERFACE);
const SOURCE_START = /** @type {{ version: number, layout: number, policy: number, readable: boolean }} */ (INTERFACE.vocabularies.fake_source_start);
// The port's constants that the data also states: checked when the module loads.
agrees("the default job message", WORKER_CHANGED, /** @type {{ default?: unknown }} */ (recordFields(INTERFACE, "job_script").find((f) => f.name === "message")).default);
agrees("DEFAULT_MAX_ITEMS", 50, configDefault(INTERFACE, "max_items"));
agrees("DEFAULT_MAX_BYTES", 65536, configDefault(INTERFACE, "max_bytes"));
agrees("the status kinds", Object.keys(TITLE), vocabulary(INTERFACE, "status_kinds"));

/**
 * What an invalidation says (REFRESH-INV), each part optional: `hard` drops the cached result,
 * `capacity` forgets the capacity memo, `removeIds` and `added` adjust a soft-invalidated result's rows.
 * @typedef {object} InboxInvalidation
 * @property {boolean} [hard]
 * @property {boolean} [capacity]
 * @property {readonly string[]} [removeIds]
 * @property {number} [added]
 */
/** @typedef {{ id: string, at: string, title?: unknown, detail?: unknown, [field: string]: unknown }} InboxItem */
/** @typedef {{ until: number }} CapacityMemo */
/** The sources a result was computed from, as the fake source versions them. @typedef {[version: number, layout: number]} InboxSources */
/**
 * @typedef {object} InboxComputation
 * @property {InboxItem[]} items
 * @property {number} more
 * @property {number | null} expiresAt
 * @property {CapacityMemo} [capacity]
 * @property {number} policy
 */
/** @typedef {{ computation: InboxComputation, sources: InboxSources }} InboxJobResult */
/**
 * @typedef {object} InboxSource What the cache reads of the inbox's sources.
 * @property {() => number} policyRevision
 * @property {(remembered: InboxSources) => { changed: boolean, hard: boolean, sources: InboxSources }} sourceChange
 * @property {(item: InboxItem) => boolean} declines
 */
/**
 * @typedef {object} InboxJob One worker job.
 * @property {() => void} cancel
 * @property {() => "gone" | "alive"} observeCleanup
 * @property {number} [due] A scripted job's settle time (elapsed), which `advance` honours (REFRESH-IF-4).
 * @property {() => InboxJobResult | JobError} [outcome] How a scripted job ends.
 */
/** @typedef {{ launch(capacity: CapacityMemo | undefined): InboxJob }} InboxRunner */
/** @typedef {{ refreshing_only_when_runnable?: boolean, read_failure_backs_off?: boolean, reject_negative_added?: boolean }} InboxCacheOptions */
/**
 * @typedef {object} InboxCacheSettings
 * @property {number} [nowMs] The time the cache starts at.
 * @property {number} [maxItems]
 * @property {number} [maxBytes]
 * @property {InboxCacheOptions} [options]
 * @property {(line: string) => void} [log]
 * @property {boolean} [monotonicClock] Whether the host gives a monotonic clock; without one it is the wall.
 */
/** @typedef {{ items: InboxItem[], more: number, complete: boolean, refreshing: boolean, generatedAt?: string }} InboxSnapshot */
/** @typedef {"refreshing" | "unavailable"} StatusKind */
/** @typedef {"failure" | "cleanup" | "runtime"} InboxErrorKind */
/**
 * @typedef {"invalid_config" | "invalid_argument" | "invalid_time" | "invalid_callers" | "invalid_invalidation"
 *   | "closed"} RefreshErrorCode
 */

/** @extends {CodedError<RefreshErrorCode>} */
export class RefreshError extends CodedError {}
/** @param {RefreshErrorCode} code @param {string} message @returns {never} */
const fail = (code, message) => { throw new RefreshError(code, message); };

// How a job ends: the seed's error classes.
class JobError extends Error {}
class SourcesChanged extends JobError { constructor() { super("inbox sources changed"); } }
class RuntimeFailure extends JobError {}
class CleanupUnresolved extends JobError {
  /** @param {unknown} group */
  constructor(group) {
    const valid = Number.isSafeInteger(group) && /** @type {number} */ (group) > 0 ? /** @type {number} */ (group) : undefined;
    super(`inbox worker group ${valid ?? "unknown"} cleanup is unresolved`); this.group = valid;
  }
}
class SourceUnreadable extends Error { constructor() { super("inbox sources unreadable"); } }

/** @param {unknown} v @returns {v is number} */
const isNatural = (v) => Number.isSafeInteger(v) && /** @type {number} */ (v) >= 0;
/** @param {unknown} v @returns {v is number} */
const isTime = (v) => Number.isSafeInteger(v) && /** @type {number} */ (v) >= 0 && /** @type {number} */ (v) <= MAX_TIME_MS;
/** @param {unknown} v @returns {v is Record<string, any>} */
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
/** @param {unknown} v @returns {v is boolean} */
const isBool = (v) => typeof v === "boolean";
/** @param {number} count */
const backoffMs = (count) => Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.min(19, count - 1)); // REFRESH-BACK-1
/** @param {number} ms */
const iso = (ms) => new Date(ms).toISOString();

/** @param {InboxItem[]} rows @param {number} total */
function boundedRows(rows, total) {
  const actual = rows.filter((row) => row.id !== OVERFLOW_ID), hint = rows.find((row) => row.id === OVERFLOW_ID);
  const more = Math.max(0, total - actual.length);
  return { items: hint && more > 0 ? [...actual, hint] : actual, more };
}

/**
 * REFRESH-INV-3: the row total, exact and clamped to 2^53 - 1. The sum is taken in BigInt, since
 * more + added can pass 2^53 where a double rounds.
 * @param {number} shown @param {number} actual @param {number} more @param {number} removed @param {number} added
 */
function totalRows(shown, actual, more, removed, added) {
  const sum = BigInt(actual) + BigInt(more) - BigInt(removed) + BigInt(added);
  const total = sum > BigInt(shown) ? sum : BigInt(shown);
  return total > BigInt(MAX_SAFE) ? MAX_SAFE : Number(total);
}

/** @param {StatusKind} kind @param {string | undefined} detail @param {number} at @returns {InboxItem} REFRESH-IF-9, REFRESH-MSG-1 */
function statusItem(kind, detail, at) {
  return { id: `inbox:${kind}`, group: "alert", kind: "status", title: TITLE[kind], detail: detail ?? DETAIL[kind],
    at: iso(at), verbs: [], link: { panel: "review" } };
}

/**
 * The memory inbox's request-driven refresh cache (seed 002's `InboxCache`). Unlike the seed's,
 * it is given its runner and its inbox source rather than a base directory, and its time as
 * `nowMs` arguments rather than clocks it reads.
 */
export class InboxCache {
  /** @type {InboxJobResult | undefined} */ cache = undefined;
  /** @type {CapacityMemo | undefined} */ capacity = undefined;
  /** @type {InboxSources | undefined} */ observed = undefined;
  /** @type {{ job: InboxJob, generation: number, launched: number } | undefined} */ running = undefined;
  /** @type {InboxJob | undefined} */ blocked = undefined;
  /** @type {number | undefined} */ blockedGroup = undefined;
  generation = 0; closed = false; pending = true; stale = false;
  failureCount = 0; retryAt = 0;
  /** @type {number | undefined} */ lastLaunch = undefined;
  lastDuration = 0;
  /** @type {InboxErrorKind | undefined} */ error = undefined;
  /** @type {string | undefined} */ errorDetail = undefined;
  /** @type {string | undefined} */ generatedAt = undefined;
  /** @type {number | undefined} */ policy = undefined;
  /** @type {string | undefined} */ capacityAt = undefined;
  /** @type {string | undefined} */ overflowAt = undefined;
  /** @type {"" | "ready" | "stale" | StatusKind} */ shown = "";
  shownAt = 0;

  /** @param {InboxRunner} runner @param {InboxSource} source @param {InboxCacheSettings} [settings] */
  constructor(runner, source, { nowMs = 0, maxItems = 50, maxBytes = 65536, options = {}, log = () => {}, monotonicClock = true } = {}) {
    this.runner = runner; this.source = source; this.maxItems = maxItems; this.maxBytes = maxBytes;
    this.options = options; this.log = log; this.monotonicClock = monotonicClock;
    this.now = nowMs;
    this.wallOffset = 0;
  }

  /** @returns {number} the seed's `now()`, the wall clock (REFRESH-CLOCK-2) */
  wall() { return this.now + this.wallOffset; }

  /** @returns {number} the seed's `clock()`: monotonic, or the wall when only `now` is given (REFRESH-CLOCK-3) */
  clock() { return this.monotonicClock ? this.now : this.wall(); }

  /** @param {unknown} wallMs REFRESH-CLOCK-1: the wall now reads `wallMs`; the elapsed time stays */
  setWall(wallMs) {
    if (!isTime(wallMs)) fail("invalid_time", "wall time out of range");
    this.wallOffset = wallMs - this.now;
  }

  /** @param {unknown} nowMs @returns {number} */
  checkTime(nowMs) {
    if (!isTime(nowMs)) fail("invalid_time", "now_ms out of range");
    if (nowMs < this.now) fail("invalid_time", "time never moves backwards");
    if (!isTime(nowMs + this.wallOffset)) fail("invalid_time", "the wall clock would leave its range");
    return nowMs;
  }

  /** @param {unknown} nowMs */
  /**
   * REFRESH-IF-4: move the elapsed time (and the wall with it) to `nowMs`, first settling a running
   * scripted job that is due by then, at its due time.
   * @param {unknown} nowMs @returns {{ settled: string | null, reason: string | null }}
   */
  advance(nowMs) {
    const now = this.checkTime(nowMs), job = this.running?.job;
    let settled = { settled: /** @type {string | null} */ (null), reason: /** @type {string | null} */ (null) };
    if (job && job.due !== undefined && job.outcome && job.due <= now) settled = this.settle(job, job.outcome(), job.due);
    this.now = now;
    return settled;
  }

  /**
   * REFRESH-INV: a boolean is a whole invalidation (`true`: hard, with the capacity memo) or a soft
   * one (`false`); a record says which parts. Nothing given is a soft invalidation.
   * @param {boolean | InboxInvalidation} [input]
   * @returns {void}
   */
  invalidate(input = {}) {
    const change = typeof input === "boolean" ? { hard: input, capacity: input } : input;
    if (this.options.reject_negative_added && (change.added ?? 0) < 0) fail("invalid_invalidation", "added must not be negative"); // REFRESH-OPT-3
    this.generation++; this.pending = true; this.stale = true;
    if (change.hard) { this.cache = undefined; this.observed = undefined; }
    else if (this.cache && (change.removeIds?.length || change.added)) {
      const old = this.cache.computation, actual = old.items.filter((item) => item.id !== OVERFLOW_ID);
      const removed = new Set(change.removeIds ?? []), shown = actual.filter((item) => !removed.has(item.id));
      // REFRESH-INV-3: exact while the sum is below 2^53 (it is: every term is a safe integer or a
      // small count, and the clamp below takes over from 2^53 - 1), so the clamp is the only rounding.
      const total = totalRows(shown.length, actual.length, old.more, removed.size, change.added ?? 0);
      const hint = old.items.find((item) => item.id === OVERFLOW_ID);
      Object.assign(old, boundedRows(hint ? [...shown, hint] : shown, total));
    }
    if (change.capacity) this.capacity = undefined;
  }

  /** @returns {boolean} REFRESH-START-1 */
  allowed() {
    return this.clock() >= Math.max(this.retryAt, this.lastLaunch === undefined ? 0 : this.lastLaunch + Math.max(SPACING_MS, this.lastDuration));
  }

  recover() { // REFRESH-REC-2
    if (this.blocked && this.blocked.observeCleanup() === "gone") {
      this.blocked = undefined; this.blockedGroup = undefined; this.error = undefined;
    }
  }

  refresh() {
    if (this.closed || this.running || this.blocked || !this.pending || !this.allowed()) return;
    this.lastLaunch = this.clock(); this.pending = false; this.error = undefined; this.errorDetail = undefined;
    /** @type {InboxJob} */
    let job;
    try { job = this.runner.launch(this.capacity); } catch (error) {
      if (!(error instanceof JobError)) throw error;
      this.lastDuration = 0; this.failed(error); return;
    }
    this.running = { job, generation: this.generation, launched: this.lastLaunch };
  }

  /** @param {JobError} error @param {InboxJob} [job] REFRESH-BACK */
  failed(error, job) {
    if (error instanceof SourcesChanged) { this.pending = true; return; }
    this.failureCount = Math.min(20, this.failureCount + 1);
    this.retryAt = this.clock() + backoffMs(this.failureCount);
    this.pending = true;
    this.error = error instanceof RuntimeFailure ? "runtime" : error instanceof CleanupUnresolved ? "cleanup" : "failure";
    if (error instanceof CleanupUnresolved && job && error.group !== undefined) { this.blocked = job; this.blockedGroup = error.group; }
    if (error instanceof RuntimeFailure) { this.cache = undefined; this.errorDetail = error.message; }
    if (!this.closed) this.writeLog(error instanceof RuntimeFailure ? error.message : this.error === "cleanup"
      ? `amem: inbox group ${this.blockedGroup ?? "unknown"} cleanup unresolved; snapshots will observe recovery without signalling it.`
      : LOG_FAILED);
  }

  /** @param {string} line REFRESH-BACK-6: the seed wraps its log call; a sink that throws changes nothing. */
  writeLog(line) {
    try { this.log(line); } catch { /* the host's sink failed; the cache goes on */ }
  }

  /**
   * A job's end, at its due time.
   * @param {InboxJob} job @param {InboxJobResult | JobError} outcome @param {number} nowMs
   * @returns {{ settled: string | null, reason: string | null }}
   */
  settle(job, outcome, nowMs) {
    this.now = this.checkTime(nowMs);
    const running = this.running;
    if (running === undefined) throw new Error("no job is running");
    try {
      if (outcome instanceof JobError) {
        this.failed(outcome, job);
        if (outcome instanceof SourcesChanged) return { settled: "changed", reason: null };
        return { settled: this.error ?? null, reason: outcome.message };
      }
      try { return { settled: this.accept(outcome, running.generation), reason: null }; } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        this.failed(new JobError(message), job);
        return { settled: "failure", reason: message };
      }
    } finally {
      this.lastDuration = Math.max(0, this.clock() - running.launched); this.running = undefined; // REFRESH-START-3
    }
  }

  /** @param {InboxJobResult} result @param {number} generation REFRESH-ACC */
  accept(result, generation) {
    const revision = this.source.policyRevision(), computation = result.computation;
    if (generation !== this.generation || computation.policy !== revision || this.source.sourceChange(result.sources).changed) {
      this.pending = true; return "discarded";
    }
    const expires = computation.expiresAt;
    if (expires !== null && (!Number.isFinite(expires) || expires < 0)) throw Error("invalid inbox expiry");
    if (expires !== null && this.wall() >= expires) { this.invalidate({ hard: true }); return "expired"; }
    if (computation.items.length > this.maxItems || Buffer.byteLength(JSON.stringify(computation.items)) > this.maxBytes
      || !Number.isSafeInteger(computation.more) || computation.more < 0) throw Error("invalid inbox result");
    if (computation.items.some((item) => item.id !== OVERFLOW_ID && this.source.declines(item))) throw Error("inbox result declined");
    this.cache = structuredClone(result); this.observed = this.cache.sources; this.capacity = this.cache.computation.capacity ?? undefined;
    const cap = this.cache.computation.items.find((item) => item.id === CAPACITY_ID);
    if (cap) { this.capacityAt ??= cap.at; cap.at = this.capacityAt; } else this.capacityAt = undefined;
    const overflow = this.cache.computation.items.find((item) => item.id === OVERFLOW_ID);
    if (overflow) { this.overflowAt ??= overflow.at; overflow.at = this.overflowAt; } else this.overflowAt = undefined;
    this.policy = revision; this.generatedAt = iso(this.wall()); this.stale = false; this.pending = false;
    this.failureCount = 0; this.retryAt = 0; this.error = undefined; this.errorDetail = undefined;
    return "accepted";
  }

  /**
   * REFRESH-SNAP: what `callers` concurrent requests at `nowMs` are answered, one copy each.
   * @param {unknown} nowMs @param {unknown} [callers]
   * @returns {InboxSnapshot[]}
   */
  snapshot(nowMs, callers = 1) {
    if (!isNatural(callers) || callers < 1 || callers > MAX_CALLERS) fail("invalid_callers", "callers out of range");
    this.checkTime(nowMs);
    if (this.closed) fail("closed", "inbox provider is closed");
    this.now = /** @type {number} */ (nowMs);
    const value = this.compute();
    return Array.from({ length: /** @type {number} */ (callers) }, () => structuredClone(value));
  }

  /** @returns {InboxSnapshot} */
  compute() {
    const hard = { hard: true, capacity: true };
    try {
      this.recover();
      const revision = this.source.policyRevision();
      if (this.policy !== undefined && this.policy !== revision) this.invalidate(hard);
      this.policy = revision;
      if (this.cache) {
        const changed = this.source.sourceChange(this.observed ?? this.cache.sources);
        this.observed = changed.sources;
        if (changed.changed) this.invalidate({ hard: changed.hard, capacity: changed.hard });
        if (this.cache && this.cache.computation.expiresAt !== null && this.wall() >= this.cache.computation.expiresAt) {
          this.invalidate({ hard: true });
        }
        if (this.capacity && this.wall() >= this.capacity.until && !this.stale) this.invalidate();
      }
      this.refresh();
      if (this.cache && (!this.stale || this.cache.computation.items.length)) {
        this.shown = this.stale ? "stale" : "ready";
        const paused = this.options.refreshing_only_when_runnable && (this.error || this.blocked); // REFRESH-OPT-1
        return { items: structuredClone(this.cache.computation.items), more: this.cache.computation.more,
          complete: !this.stale, refreshing: this.stale && !paused, generatedAt: this.generatedAt };
      }
      return this.status();
    } catch (error) {
      if (!(error instanceof SourceUnreadable)) throw error;
      this.invalidate(hard); this.error = "failure"; // REFRESH-SNAP-5
      if (this.options.read_failure_backs_off) { // REFRESH-OPT-2
        this.failureCount = Math.min(20, this.failureCount + 1);
        this.retryAt = this.clock() + backoffMs(this.failureCount);
        this.writeLog(LOG_FAILED);
      }
      return this.status();
    }
  }

  /** @returns {InboxSnapshot} */
  status() {
    const kind = this.error || this.blocked ? "unavailable" : "refreshing";
    if (this.shown !== kind) { this.shown = kind; this.shownAt = Math.max(this.wall(), this.shownAt + 1); } // REFRESH-SNAP-4
    return { items: [statusItem(kind, this.errorDetail, this.shownAt)], more: 0, complete: false, refreshing: true };
  }

  /** @returns {CleanupUnresolved | undefined} the unresolved cleanup, if cancelling left one (REFRESH-CLOSE) */
  close() {
    this.closed = true; this.cache = undefined; this.capacity = undefined; this.generation++;
    const running = this.running, job = running ? running.job : this.blocked;
    if (!job) return undefined;
    try { job.cancel(); } catch (error) {
      if (!(error instanceof CleanupUnresolved)) throw error;
      if (running) this.settleCancelled(running, error);
      return error; // a blocked job stays blocked: the seed's close throws before it forgets it
    }
    if (running) this.settleCancelled(running, new JobError("inbox worker cancelled"));
    this.blocked = undefined;
    return undefined;
  }

  /**
   * REFRESH-CLOSE-3: cancelling settles the running job as the seed's does: a failure (counted,
   * backed off, blocked when an unresolved cleanup names a known group, unlogged since closed).
   * @param {{ job: InboxJob, launched: number }} running @param {JobError} error
   */
  settleCancelled(running, error) {
    this.running = undefined;
    this.failed(error, running.job);
    this.lastDuration = Math.max(0, this.clock() - running.launched);
  }
}

// -- the fakes a case describes (REFRESH-IF-1..3) ------------------------------------

/** @typedef {Record<string, any>} Args */
/** @typedef {import("./protocol.mjs").Step} Step */
/** @typedef {import("./protocol.mjs").CaseResult} CaseResult */
/** @typedef {{ readonly now: number }} FakeClock */
/**
 * @typedef {object} JobScript One scripted worker job (REFRESH-IF-2).
 * @property {string} outcome
 * @property {number} duration
 * @property {{ items: InboxItem[], more: number, expires_at: number | null, capacity: CapacityMemo | null } | null} computation
 * @property {number | null} group
 * @property {number | null} reap
 * @property {"gone" | "unresolved"} cancel
 * @property {string} message
 */

/** @param {string} message @returns {never} */
const configError = (message) => fail("invalid_config", message);
/**
 * A step's arguments over the data's defaults: an unknown name is the event's own code, and so is
 * an absent required argument (the values are checked where they are used).
 * @param {string} name @param {unknown} args @returns {Args}
 */
const only = (name, args) => {
  const event = /** @type {import("./interface-data.mjs").InterfaceEvent} */ (eventOf(INTERFACE, name));
  const code = /** @type {RefreshErrorCode} */ (unknownArgumentCode(INTERFACE, event));
  if (!isObject(args)) fail(code, "args must be an object");
  for (const key of Object.keys(args)) if (!event.arguments.some((a) => a.name === key)) fail(code, `unknown argument ${key}`);
  for (const argument of event.arguments) {
    if (argument.required && !(argument.name in args)) fail(/** @type {RefreshErrorCode} */ (argument.code), `${name} needs ${argument.name}`);
  }
  return withDefaults(event, args);
};

/** @param {unknown} raw @returns {NonNullable<JobScript["computation"]>} */
function parseComputation(raw) {
  if (!isObject(raw) || Object.keys(raw).sort().join() !== "capacity,expires_at,items,more") return configError("bad computation keys");
  if (!Array.isArray(raw.items) || !raw.items.every((i) => isObject(i) && typeof i.id === "string" && typeof i.at === "string")) configError("bad items");
  const cap = raw.capacity;
  if (cap !== null && !(isObject(cap) && Object.keys(cap).join() === "until" && isNatural(cap.until))) configError("bad capacity");
  return /** @type {NonNullable<JobScript["computation"]>} */ (raw);
}

/** @param {unknown} raw @returns {JobScript} */
function parseScript(raw) {
  if (!isObject(raw)) return configError("a job script is an object");
  for (const key of Object.keys(raw)) if (!SCRIPT_KEYS.includes(key)) configError(`unknown script key ${key}`);
  const { outcome, duration_ms, group, reap_ms, cancel, message } = /** @type {Record<string, any>} */ (withRecordDefaults(INTERFACE, "job_script", raw));
  if (!OUTCOMES.includes(outcome)) configError("bad outcome");
  if (("computation" in raw) !== (outcome === "result")) configError("computation exactly for result");
  if (!isNatural(duration_ms)) configError("bad duration_ms");
  if (group !== null && !Number.isInteger(group)) configError("bad group");
  if (reap_ms !== null && !isNatural(reap_ms)) configError("bad reap_ms");
  if (typeof cancel !== "string" || !CANCELS.includes(cancel)) configError("bad cancel");
  if (typeof message !== "string" || !message) configError("bad message");
  return { outcome, duration: duration_ms, computation: outcome === "result" ? parseComputation(raw.computation) : null,
    group, reap: reap_ms, cancel: /** @type {"gone" | "unresolved"} */ (cancel), message };
}

/** @implements {InboxSource} */
class FakeSource {
  /** @param {readonly string[]} deny */
  constructor(deny) {
    this.version = SOURCE_START.version; this.layout = SOURCE_START.layout; this.policy = SOURCE_START.policy;
    this.readable = SOURCE_START.readable; this.deny = deny;
  }
  policyRevision() { if (!this.readable) throw new SourceUnreadable(); return this.policy; }
  /** @returns {InboxSources} */
  current() { return [this.version, this.layout]; }
  /** @param {InboxSources} remembered */
  sourceChange(remembered) {
    if (!this.readable) throw new SourceUnreadable();
    return { changed: remembered[0] !== this.version || remembered[1] !== this.layout, hard: remembered[1] !== this.layout, sources: this.current() };
  }
  /** @param {InboxItem} item */
  declines(item) {
    const texts = [item.title, item.detail].filter((v) => typeof v === "string");
    // Screening compares UTF-16 code units, as includes does (spec/inbox-refresh.md, Screening).
    // WARNING: the reference's scripted source and model compare the same way.
    return this.deny.some((word) => texts.some((text) => text.includes(word)));
  }
}

/** @implements {InboxJob} */
class FakeJob {
  /** @param {JobScript} script @param {FakeClock} clock @param {number} policy @param {InboxSources} sources */
  constructor(script, clock, policy, sources) {
    this.script = script; this.clock = clock; this.policy = policy; this.sources = sources;
    this.due = clock.now + script.duration; this.cancelUnresolved = false; this.settled = false;
  }
  /** @returns {InboxJobResult | JobError} */
  outcome() {
    this.settled = true;
    const s = this.script;
    switch (s.outcome) {
      case "result": {
        const raw = structuredClone(/** @type {NonNullable<JobScript["computation"]>} */ (s.computation));
        return { computation: { items: raw.items, more: raw.more, expiresAt: raw.expires_at, capacity: raw.capacity ?? undefined, policy: this.policy }, sources: this.sources };
      }
      case "changed": return new SourcesChanged();
      case "unavailable": return new JobError("inbox worker unavailable");
      case "moved": return new RuntimeFailure(WORKER_CHANGED);
      default: return new CleanupUnresolved(s.group); // cleanup, deadline
    }
  }
  /** @returns {"gone" | "alive"} */
  observeCleanup() {
    if (this.cancelUnresolved || this.script.reap === null) return "alive";
    return this.clock.now >= this.due + this.script.reap ? "gone" : "alive";
  }
  cancel() {
    if (!this.settled) { // still running: the script says what cancelling proves
      if (this.script.cancel === "unresolved") { this.cancelUnresolved = true; throw new CleanupUnresolved(this.script.group); }
      return;
    }
    if (this.observeCleanup() !== "gone") throw new CleanupUnresolved(this.script.group);
  }
}

/** @implements {InboxRunner} */
class FakeRunner {
  /** @type {CapacityMemo | undefined} */
  lastCapacity = undefined;
  launches = 0;
  /** @param {JobScript[]} scripts @param {FakeClock} clock @param {FakeSource} source */
  constructor(scripts, clock, source) { this.scripts = scripts; this.clock = clock; this.source = source; }
  /** @param {CapacityMemo | undefined} capacity */
  launch(capacity) {
    this.lastCapacity = capacity;
    const script = this.scripts[this.launches] ?? parseScript(INTERFACE.vocabularies.unscripted_job);
    this.launches++;
    if (script.outcome === "launch_runtime") throw new RuntimeFailure(script.message);
    if (script.outcome === "launch_error") throw new JobError("inbox worker unavailable");
    return new FakeJob(script, this.clock, this.source.policy, this.source.current());
  }
}

/** One case's cache with the fakes its config describes; `apply` runs one protocol step. */
export class InboxRefreshCaseSession {
  /** @type {string[]} */
  lines = [];

  /** @param {unknown} config */
  constructor(config) {
    if (!isObject(config)) throw new RefreshError("invalid_config", "config must be an object");
    for (const key of Object.keys(config)) if (!CONFIG_KEYS.includes(key)) configError(`unknown key ${key}`);
    const { start_ms, max_items, max_bytes, deny, jobs, options, log_throws, monotonic_clock } = /** @type {Record<string, any>} */ (withConfigDefaults(INTERFACE, config));
    if (!isBool(log_throws)) configError("bad log_throws");
    if (!isBool(monotonic_clock)) configError("bad monotonic_clock");
    if (!isTime(start_ms)) configError("bad start_ms");
    if (!Number.isSafeInteger(max_items) || max_items < 1) configError("bad max_items");
    if (!Number.isSafeInteger(max_bytes) || max_bytes < 1) configError("bad max_bytes");
    if (!Array.isArray(deny) || !deny.every((d) => typeof d === "string" && d)) configError("bad deny");
    if (!Array.isArray(jobs)) configError("bad jobs");
    if (!isObject(options)) configError("bad options");
    for (const [key, value] of Object.entries(options)) if (!OPTIONS.includes(key) || !isBool(value)) configError(`bad option ${key}`);
    const scripts = jobs.map(parseScript);
    // The fake world's time is the cache's elapsed time (REFRESH-CLOCK-1), which only the cache moves.
    const session = this;
    /** @type {FakeClock} */
    this.clock = { get now() { return session.cache ? session.cache.now : start_ms; } };
    this.source = new FakeSource(deny);
    this.runner = new FakeRunner(scripts, this.clock, this.source);
    this.cache = new InboxCache(this.runner, this.source, { nowMs: start_ms, maxItems: max_items, maxBytes: max_bytes, options, monotonicClock: monotonic_clock, log: (line) => {
      // The scripted sink (REFRESH-IF-1): it records the line, then throws when the case says so.
      this.lines.push(line);
      if (log_throws) throw new Error("the scripted log sink throws");
    } });
  }

  /** @param {Step} step @returns {Record<string, unknown>} */
  apply({ event, args = {} }) {
    this.lines = [];
    const handler = Object.hasOwn(HANDLERS, event) ? HANDLERS[event] : undefined;
    if (!handler) throw new Error(`unknown inbox-refresh event ${event}`);
    try {
      return { ...handler.call(this, args), log: [...this.lines] };
    } catch (error) {
      if (error instanceof RefreshError) return { error: error.code, log: [] };
      throw error;
    }
  }
}

// Each protocol event is one call of the cache (README.md has the table); `invalidate` passes the
// seed's argument through: its `value` as the boolean, or only the record keys the step gives.
/** @type {Record<string, (this: InboxRefreshCaseSession, args: Args) => Record<string, unknown>>} */
const HANDLERS = {
  snapshot(args) {
    const { callers } = only("snapshot", args), before = this.runner.launches;
    const [first] = this.cache.snapshot(this.clock.now, callers);
    const launched = this.runner.launches > before ? { capacity: this.runner.lastCapacity ? this.runner.lastCapacity.until : null } : null;
    return { snapshot: first, callers, launched };
  },
  advance(args) {
    return this.cache.advance(only("advance", args).now_ms);
  },
  set_wall(args) {
    this.cache.setWall(only("set_wall", args).now_ms);
    return {};
  },
  invalidate(args) {
    only("invalidate", args);
    if ("value" in args) {
      if (!isBool(args.value)) fail("invalid_invalidation", "value must be a boolean");
      if (Object.keys(args).length > 1) fail("invalid_invalidation", "value mixed with record keys");
      this.cache.invalidate(args.value);
      return {};
    }
    /** @type {InboxInvalidation} */
    const change = {};
    if ("hard" in args) change.hard = isBool(args.hard) ? args.hard : fail("invalid_invalidation", "hard must be a boolean");
    if ("capacity" in args) change.capacity = isBool(args.capacity) ? args.capacity : fail("invalid_invalidation", "capacity must be a boolean");
    if ("remove_ids" in args) {
      const ids = args.remove_ids;
      if (!Array.isArray(ids) || !ids.every((id) => typeof id === "string")) fail("invalid_invalidation", "remove_ids must be strings");
      change.removeIds = ids;
    }
    if ("added" in args) change.added = Number.isSafeInteger(args.added) ? args.added : fail("invalid_invalidation", "added must be a safe integer");
    this.cache.invalidate(change);
    return {};
  },
  close(args) {
    only("close", args);
    const unresolved = this.cache.close();
    return unresolved ? { close: "unresolved", message: unresolved.message } : { close: "resolved", message: null };
  },
  // The scripted world's events (REFRESH-IF-11): they move the fake source and nothing else.
  edit_sources(args) {
    const { hard } = only("edit_sources", args);
    if (!isBool(hard)) fail("invalid_argument", "hard must be a boolean");
    this.source.version++;
    if (hard) this.source.layout++;
    return {};
  },
  change_policy(args) { only("change_policy", args); this.source.policy++; return {}; },
  set_readable(args) {
    const { value } = only("set_readable", args);
    if (!isBool(value)) fail("invalid_argument", "value must be a boolean");
    this.source.readable = value;
    return {};
  },
};

/**
 * @param {Record<string, unknown>} config @param {Step[]} steps
 * @returns {CaseResult}
 */
export function runCase(config, steps) {
  return runSteps(RefreshError, () => new InboxRefreshCaseSession(config), (session, step) => session.apply(step), steps);
}
