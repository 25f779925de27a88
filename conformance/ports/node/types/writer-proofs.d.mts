/**
 * WRITER-SAFE: a refusal built only from a genuine error's own data fields; anything else is `unavailable`.
 * @param {unknown} error @param {string} category @param {PlacementWriterContextPhase} [phase]
 * @returns {PlacementWriterContextError}
 */
export function safeRefusal(error: unknown, category: string, phase?: PlacementWriterContextPhase): PlacementWriterContextError;
/**
 * WRITER-VER-1: a plain release as three BigInts, or null.
 * @param {unknown} text
 * @returns {[bigint, bigint, bigint] | null}
 */
export function parseRelease(text: unknown): [bigint, bigint, bigint] | null;
/**
 * @param {Record<string, unknown>} config @param {Step[]} steps
 * @returns {CaseResult}
 */
export function runCase(config: Record<string, unknown>, steps: Step[]): CaseResult;
export const FEATURES: string[];
/** The root categories a refusal names (WRITER-CAT). */
export const PLACEMENT_WRITER_ROOT_CATEGORIES: readonly ["running CLI", "setup receipt", "declared writer", "active locator", "home floor", "writer renewal"];
/** @typedef {(typeof PLACEMENT_WRITER_ROOT_CATEGORIES)[number]} PlacementWriterRootCategory */
/** The cause classes a refusal names. */
export const PLACEMENT_WRITER_CAUSE_CLASSES: readonly ["missing", "changed", "unavailable"];
export class SharedWriterRevisionError extends Error {
    /** @param {unknown} code anything but "staging" is "pending" */
    constructor(code: unknown);
    code: SharedWriterRenewalState;
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
    constructor(category: PlacementWriterRootCategory, causeClass: PlacementWriterCauseClass, phase?: PlacementWriterContextPhase, detail?: SyncPlacementWriterFailureDetail, renewalState?: SharedWriterRenewalState);
    /** @readonly */ readonly category: "running CLI" | "setup receipt" | "declared writer" | "active locator" | "home floor" | "writer renewal";
    /** @readonly */ readonly causeClass: "unavailable" | "missing" | "changed";
    /** @readonly */ readonly phase: PlacementWriterContextPhase;
    /** @readonly */ readonly detail: "changed" | "below-minimum" | "wrong-package" | "writable-runtime" | "unreadable" | "invalid-version" | "invalid-inventory" | "unsafe-runtime" | "missing-runtime" | "bound" | undefined;
    /** @readonly */ readonly renewalState: SharedWriterRenewalState | undefined;
    /** The protocol's `refusal` object (WRITER-IF). */
    toJSON(): {
        category: "running CLI" | "setup receipt" | "declared writer" | "active locator" | "home floor" | "writer renewal";
        cause: "unavailable" | "missing" | "changed";
        phase: PlacementWriterContextPhase;
        detail: "changed" | "below-minimum" | "wrong-package" | "writable-runtime" | "unreadable" | "invalid-version" | "invalid-inventory" | "unsafe-runtime" | "missing-runtime" | "bound" | null;
        renewal_state: SharedWriterRenewalState | null;
        message: string;
    };
}
export function canonicalJSON(value: unknown): string;
export type Locator = {
    data: Record<string, unknown>;
    roots: string[] | null;
    renewal: SharedWriterRenewalState | null;
    writers: Writer[];
};
export type RequiredRoots = {
    own: string;
    receipt: string[];
    roots: string[];
};
export type WriterOptions = {
    attest_requires_fences: boolean;
    compare_writers_by_id: boolean;
};
export type WriterContext = {
    phase: PlacementWriterContextPhase;
    measurement: Measurement;
    attest: () => {
        writers: Writer[];
        legacySyncQuiesced: boolean;
    };
    lastRefusal?: PlacementWriterContextError | undefined;
};
export type PlacementWriterRootCategory = (typeof PLACEMENT_WRITER_ROOT_CATEGORIES)[number];
export type PlacementWriterCauseClass = (typeof PLACEMENT_WRITER_CAUSE_CLASSES)[number];
export type PlacementWriterContextPhase = "initial" | "active";
export type SharedWriterRenewalState = "pending" | "staging";
export type SyncPlacementWriterFailureDetail = keyof typeof FAILURE_DETAILS;
export type WriterProofsErrorCode = "invalid_config" | "invalid_argument" | "invalid_roots" | "no_context" | "fences_not_held";
export type WalkEntry = {
    path: string;
    kind: "dir" | "file";
    mode: number;
    size: bigint;
    signature: string;
};
export type MeasuredRoot = {
    root: string;
    writerId: string;
    version: string | null;
    pin: string;
};
export type Writer = {
    writerId: string;
    version: string | null;
    pin: string;
};
export type Measurement = {
    roots: MeasuredRoot[];
    writers: Writer[];
};
export type Args = import("./protocol.mjs").Args;
export type Step = import("./protocol.mjs").Step;
export type CaseResult = import("./protocol.mjs").CaseResult;
declare const FAILURE_DETAILS: {
    "below-minimum": string;
    "wrong-package": string;
    "writable-runtime": string;
    unreadable: string;
    "invalid-version": string;
    "invalid-inventory": string;
    "unsafe-runtime": string;
    "missing-runtime": string;
    bound: string;
    changed: string;
};
export {};
