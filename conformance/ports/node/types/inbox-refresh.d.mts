/**
 * @param {Record<string, unknown>} config @param {Step[]} steps
 * @returns {CaseResult}
 */
export function runCase(config: Record<string, unknown>, steps: Step[]): CaseResult;
export const NAME: "inbox-refresh";
export const FEATURES: string[];
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
export class RefreshError extends CodedError<RefreshErrorCode> {
    constructor(code: RefreshErrorCode, message: string);
}
/**
 * The memory inbox's request-driven refresh cache (seed 002's `InboxCache`). Unlike the seed's,
 * it is given its runner and its inbox source rather than a base directory, and its time as
 * `nowMs` arguments rather than clocks it reads.
 */
export class InboxCache {
    /** @param {InboxRunner} runner @param {InboxSource} source @param {InboxCacheSettings} [settings] */
    constructor(runner: InboxRunner, source: InboxSource, { nowMs, maxItems, maxBytes, options, log, monotonicClock }?: InboxCacheSettings);
    /** @type {InboxJobResult | undefined} */ cache: InboxJobResult | undefined;
    /** @type {CapacityMemo | undefined} */ capacity: CapacityMemo | undefined;
    /** @type {InboxSources | undefined} */ observed: InboxSources | undefined;
    /** @type {{ job: InboxJob, generation: number, launched: number } | undefined} */ running: {
        job: InboxJob;
        generation: number;
        launched: number;
    } | undefined;
    /** @type {InboxJob | undefined} */ blocked: InboxJob | undefined;
    /** @type {number | undefined} */ blockedGroup: number | undefined;
    generation: number;
    closed: boolean;
    pending: boolean;
    stale: boolean;
    failureCount: number;
    retryAt: number;
    /** @type {number | undefined} */ lastLaunch: number | undefined;
    lastDuration: number;
    /** @type {InboxErrorKind | undefined} */ error: InboxErrorKind | undefined;
    /** @type {string | undefined} */ errorDetail: string | undefined;
    /** @type {string | undefined} */ generatedAt: string | undefined;
    /** @type {number | undefined} */ policy: number | undefined;
    /** @type {string | undefined} */ capacityAt: string | undefined;
    /** @type {string | undefined} */ overflowAt: string | undefined;
    /** @type {"" | "ready" | "stale" | StatusKind} */ shown: "" | "ready" | "stale" | StatusKind;
    shownAt: number;
    runner: InboxRunner;
    source: InboxSource;
    maxItems: number;
    maxBytes: number;
    options: InboxCacheOptions;
    log: (line: string) => void;
    monotonicClock: boolean;
    now: number;
    wallOffset: number;
    /** @returns {number} the seed's `now()`, the wall clock (REFRESH-CLOCK-2) */
    wall(): number;
    /** @returns {number} the seed's `clock()`: monotonic, or the wall when only `now` is given (REFRESH-CLOCK-3) */
    clock(): number;
    /** @param {unknown} wallMs REFRESH-CLOCK-1: the wall now reads `wallMs`; the elapsed time stays */
    setWall(wallMs: unknown): void;
    /** @param {unknown} nowMs @returns {number} */
    checkTime(nowMs: unknown): number;
    /** @param {unknown} nowMs */
    /**
     * REFRESH-IF-4: move the elapsed time (and the wall with it) to `nowMs`, first settling a running
     * scripted job that is due by then, at its due time.
     * @param {unknown} nowMs @returns {{ settled: string | null, reason: string | null }}
     */
    advance(nowMs: unknown): {
        settled: string | null;
        reason: string | null;
    };
    /**
     * REFRESH-INV: a boolean is a whole invalidation (`true`: hard, with the capacity memo) or a soft
     * one (`false`); a record says which parts. Nothing given is a soft invalidation.
     * @param {boolean | InboxInvalidation} [input]
     * @returns {void}
     */
    invalidate(input?: boolean | InboxInvalidation): void;
    /** @returns {boolean} REFRESH-START-1 */
    allowed(): boolean;
    recover(): void;
    refresh(): void;
    /** @param {JobError} error @param {InboxJob} [job] REFRESH-BACK */
    failed(error: JobError, job?: InboxJob): void;
    /** @param {string} line REFRESH-BACK-6: the seed wraps its log call; a sink that throws changes nothing. */
    writeLog(line: string): void;
    /**
     * A job's end, at its due time.
     * @param {InboxJob} job @param {InboxJobResult | JobError} outcome @param {number} nowMs
     * @returns {{ settled: string | null, reason: string | null }}
     */
    settle(job: InboxJob, outcome: InboxJobResult | JobError, nowMs: number): {
        settled: string | null;
        reason: string | null;
    };
    /** @param {InboxJobResult} result @param {number} generation REFRESH-ACC */
    accept(result: InboxJobResult, generation: number): "expired" | "discarded" | "accepted";
    /**
     * REFRESH-SNAP: what `callers` concurrent requests at `nowMs` are answered, one copy each.
     * @param {unknown} nowMs @param {unknown} [callers]
     * @returns {InboxSnapshot[]}
     */
    snapshot(nowMs: unknown, callers?: unknown): InboxSnapshot[];
    /** @returns {InboxSnapshot} */
    compute(): InboxSnapshot;
    /** @returns {InboxSnapshot} */
    status(): InboxSnapshot;
    /** @returns {CleanupUnresolved | undefined} the unresolved cleanup, if cancelling left one (REFRESH-CLOSE) */
    close(): CleanupUnresolved | undefined;
    /**
     * REFRESH-CLOSE-3: cancelling settles the running job as the seed's does: a failure (counted,
     * backed off, blocked when an unresolved cleanup names a known group, unlogged since closed).
     * @param {{ job: InboxJob, launched: number }} running @param {JobError} error
     */
    settleCancelled(running: {
        job: InboxJob;
        launched: number;
    }, error: JobError): void;
}
/** One case's cache with the fakes its config describes; `apply` runs one protocol step. */
export class InboxRefreshCaseSession {
    /** @param {unknown} config */
    constructor(config: unknown);
    /** @type {string[]} */
    lines: string[];
    /** @type {FakeClock} */
    clock: FakeClock;
    source: FakeSource;
    runner: FakeRunner;
    cache: InboxCache;
    /** @param {Step} step @returns {Record<string, unknown>} */
    apply({ event, args }: Step): Record<string, unknown>;
}
/**
 * What an invalidation says (REFRESH-INV), each part optional: `hard` drops the cached result,
 * `capacity` forgets the capacity memo, `removeIds` and `added` adjust a soft-invalidated result's rows.
 */
export type InboxInvalidation = {
    hard?: boolean | undefined;
    capacity?: boolean | undefined;
    removeIds?: readonly string[] | undefined;
    added?: number | undefined;
};
export type InboxItem = {
    id: string;
    at: string;
    title?: unknown;
    detail?: unknown;
    [field: string]: unknown;
};
export type CapacityMemo = {
    until: number;
};
/**
 * The sources a result was computed from, as the fake source versions them.
 */
export type InboxSources = [version: number, layout: number];
export type InboxComputation = {
    items: InboxItem[];
    more: number;
    expiresAt: number | null;
    capacity?: CapacityMemo | undefined;
    policy: number;
};
export type InboxJobResult = {
    computation: InboxComputation;
    sources: InboxSources;
};
/**
 * What the cache reads of the inbox's sources.
 */
export type InboxSource = {
    policyRevision: () => number;
    sourceChange: (remembered: InboxSources) => {
        changed: boolean;
        hard: boolean;
        sources: InboxSources;
    };
    declines: (item: InboxItem) => boolean;
};
/**
 * One worker job.
 */
export type InboxJob = {
    cancel: () => void;
    observeCleanup: () => "gone" | "alive";
    /**
     * A scripted job's settle time (elapsed), which `advance` honours (REFRESH-IF-4).
     */
    due?: number | undefined;
    /**
     * How a scripted job ends.
     */
    outcome?: (() => InboxJobResult | JobError) | undefined;
};
export type InboxRunner = {
    launch(capacity: CapacityMemo | undefined): InboxJob;
};
export type InboxCacheOptions = {
    refreshing_only_when_runnable?: boolean;
    read_failure_backs_off?: boolean;
    reject_negative_added?: boolean;
};
export type InboxCacheSettings = {
    /**
     * The time the cache starts at.
     */
    nowMs?: number | undefined;
    maxItems?: number | undefined;
    maxBytes?: number | undefined;
    options?: InboxCacheOptions | undefined;
    log?: ((line: string) => void) | undefined;
    /**
     * Whether the host gives a monotonic clock; without one it is the wall.
     */
    monotonicClock?: boolean | undefined;
};
export type InboxSnapshot = {
    items: InboxItem[];
    more: number;
    complete: boolean;
    refreshing: boolean;
    generatedAt?: string;
};
export type StatusKind = "refreshing" | "unavailable";
export type InboxErrorKind = "failure" | "cleanup" | "runtime";
export type RefreshErrorCode = "invalid_config" | "invalid_argument" | "invalid_time" | "invalid_callers" | "invalid_invalidation" | "closed";
export type Args = Record<string, any>;
export type Step = import("./protocol.mjs").Step;
export type CaseResult = import("./protocol.mjs").CaseResult;
export type FakeClock = {
    readonly now: number;
};
/**
 * One scripted worker job (REFRESH-IF-2).
 */
export type JobScript = {
    outcome: string;
    duration: number;
    computation: {
        items: InboxItem[];
        more: number;
        expires_at: number | null;
        capacity: CapacityMemo | null;
    } | null;
    group: number | null;
    reap: number | null;
    cancel: "gone" | "unresolved";
    message: string;
};
import { CodedError } from "./protocol.mjs";
declare class JobError extends Error {
}
declare class CleanupUnresolved extends JobError {
    /** @param {unknown} group */
    constructor(group: unknown);
    group: number | undefined;
}
/** @implements {InboxSource} */
declare class FakeSource implements InboxSource {
    /** @param {readonly string[]} deny */
    constructor(deny: readonly string[]);
    version: number;
    layout: number;
    policy: number;
    readable: boolean;
    deny: readonly string[];
    policyRevision(): number;
    /** @returns {InboxSources} */
    current(): InboxSources;
    /** @param {InboxSources} remembered */
    sourceChange(remembered: InboxSources): {
        changed: boolean;
        hard: boolean;
        sources: InboxSources;
    };
    /** @param {InboxItem} item */
    declines(item: InboxItem): boolean;
}
/** @implements {InboxRunner} */
declare class FakeRunner implements InboxRunner {
    /** @param {JobScript[]} scripts @param {FakeClock} clock @param {FakeSource} source */
    constructor(scripts: JobScript[], clock: FakeClock, source: FakeSource);
    /** @type {CapacityMemo | undefined} */
    lastCapacity: CapacityMemo | undefined;
    launches: number;
    scripts: JobScript[];
    clock: FakeClock;
    source: FakeSource;
    /** @param {CapacityMemo | undefined} capacity */
    launch(capacity: CapacityMemo | undefined): FakeJob;
}
/** @implements {InboxJob} */
declare class FakeJob implements InboxJob {
    /** @param {JobScript} script @param {FakeClock} clock @param {number} policy @param {InboxSources} sources */
    constructor(script: JobScript, clock: FakeClock, policy: number, sources: InboxSources);
    script: JobScript;
    clock: FakeClock;
    policy: number;
    sources: InboxSources;
    due: number;
    cancelUnresolved: boolean;
    settled: boolean;
    /** @returns {InboxJobResult | JobError} */
    outcome(): InboxJobResult | JobError;
    /** @returns {"gone" | "alive"} */
    observeCleanup(): "gone" | "alive";
    cancel(): void;
}
export {};
