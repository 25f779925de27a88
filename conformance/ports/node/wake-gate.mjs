// @ts-check
// The wake gate (spec/wake-gate.md), a dependency-free port for Node.js 20, under the names of
// seed 000 (`InboxWakePolicy`). Requirement IDs in comments point into the spec.
//
// Time is data: the policy never reads a clock of its own. The host injects `clock`, a function
// that returns the current time in integer milliseconds, and `wakeDecisionFor` calls it once per
// decision. Durations (`scheduledSelfCadenceFloor`) are integer milliseconds too.
//
// The event names, arguments, defaults, option names and vocabularies come from the interface
// data (interface/wake-gate.interface.json, a copy of spec/wake-gate.interface.json); the seed's
// typed constants below are checked against it when the module loads.

import { agrees, configDefault, configKeys, eventOf, loadInterface, optionNames, unknownArguments, vocabulary, withDefaults }
  from "./interface-data.mjs";
import { CodedError, runSteps } from "./protocol.mjs";

const INTERFACE = loadInterface("wake-gate");

/** The anti-storm cap on consecutive inbox wakes without user input (WAKE-DEF-1). */
export const defaultMaxInboxWakeStreak = 10;
/** Scheduled self-wakes closer together than this many milliseconds are a spin (WAKE-DEF-1). */
export const defaultScheduledSelfCadenceFloor = 30_000;
/** What a scheduled self-reminder's text starts with (WAKE-SELF-1). */
export const SCHEDULED_PREFIX = "[scheduled] ";
agrees("defaultMaxInboxWakeStreak", defaultMaxInboxWakeStreak, configDefault(INTERFACE, "max_streak"));
agrees("defaultScheduledSelfCadenceFloor", defaultScheduledSelfCadenceFloor, configDefault(INTERFACE, "floor_ms"));
agrees("SCHEDULED_PREFIX", [SCHEDULED_PREFIX], vocabulary(INTERFACE, "scheduled_prefix"));
/** The options of WAKE-F1 to WAKE-F4. */
const OPTION_NAMES = optionNames(INTERFACE);

/**
 * One pending message, as WAKE-MSG-1 shapes it.
 * @typedef {{ kind: string, from: string, to: string, text: string }} AgentMessage
 */
/** @typedef {"userInput" | "scheduledSelf" | "chatter"} InboxWakeLane */
/** @typedef {"chatter_cap" | "self_spin_cap"} InboxWakeRefusalCode */
/**
 * The decision for one pending batch (WAKE-OUT-1). `refusalReason` and `refusalCode` are null
 * exactly when `wake` is true.
 * @typedef {object} InboxWakeDecision
 * @property {InboxWakeLane} lane
 * @property {boolean} wake
 * @property {boolean} countsAgainstCap
 * @property {string | null} refusalReason
 * @property {InboxWakeRefusalCode | null} refusalCode
 */
/**
 * The behaviour options from the spec's findings; each is false unless set.
 * @typedef {object} InboxWakeOptions
 * @property {boolean} [announce_requires_refusal]
 * @property {boolean} [cadence_from_allowed_wakes]
 * @property {boolean} [clamp_backwards_clock]
 * @property {boolean} [reject_empty_batch]
 */
/**
 * @typedef {object} InboxWakePolicySettings
 * @property {() => number} clock The current time in integer milliseconds; the host's, never the policy's.
 * @property {number} [maxStreak] Consecutive chatter wakes allowed without user input.
 * @property {number} [scheduledSelfCadenceFloor] In milliseconds.
 * @property {InboxWakeOptions} [options]
 */
/**
 * @typedef {"invalid_config" | "invalid_argument" | "invalid_batch" | "invalid_message" | "invalid_time"
 *   | "invalid_streak" | "invalid_floor" | "empty_batch"} WakeGateErrorCode
 */

/** @extends {CodedError<WakeGateErrorCode>} */
export class WakeGateError extends CodedError {}

/** @param {unknown} v @returns {v is number} */
const isNatural = (v) => Number.isSafeInteger(v) && /** @type {number} */ (v) >= 0;
/** @param {unknown} v @returns {v is string} */
const isNonEmptyString = (v) => typeof v === "string" && v.length > 0;
/** @param {unknown} v @returns {v is Record<string, unknown>} */
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * WAKE-MSG-1: exactly kind, from, to, text.
 * @param {unknown} raw
 * @returns {AgentMessage}
 */
export function parseMessage(raw) {
  const ok =
    isObject(raw) &&
    Object.keys(raw).sort().join() === "from,kind,text,to" &&
    isNonEmptyString(raw.kind) && isNonEmptyString(raw.from) && isNonEmptyString(raw.to) &&
    typeof raw.text === "string";
  if (!ok) throw new WakeGateError("invalid_message", "malformed message");
  return /** @type {AgentMessage} */ (raw);
}

/** @param {number} streak @param {number} cap */
const chatterReason = (streak, cap) =>
  `inbox wake refused: ${streak} consecutive inbox wakes without user input (cap ${cap}); ` +
  "the mail stays queued until the next user input";
/** @param {number} floorMs @param {number} cap */
const selfSpinReason = (floorMs, cap) =>
  "inbox wake refused: busy-spin guard: scheduled self-mail arrives faster than the " +
  `${Math.floor(floorMs / 1000)}s cadence floor and the wake cap of ${cap} is reached; ` +
  "the mail stays queued until the next user input";

export class InboxWakePolicy {
  #streak = 0;
  /** @type {number | null} */
  #lastSelfWakeMs = null;
  #announced = false;
  #refusedSinceRearm = false;
  /** @type {number} */
  #maxStreak;
  /** @type {number} */
  #floorMs;
  /** @type {() => number} */
  #clock;
  /** @type {Readonly<InboxWakeOptions>} */
  #options;

  /**
   * WAKE-IF-1: absent settings take the defaults; a null or a bad value is `invalid_config`.
   * @param {InboxWakePolicySettings} settings
   */
  constructor(settings) {
    /** @param {string} why */
    const bad = (why) => new WakeGateError("invalid_config", why);
    if (!isObject(settings)) throw bad("settings is an object");
    const {
      maxStreak = defaultMaxInboxWakeStreak, scheduledSelfCadenceFloor = defaultScheduledSelfCadenceFloor,
      clock, options = {},
    } = settings;
    if (!isNatural(maxStreak) || !isNatural(scheduledSelfCadenceFloor)) throw bad("cap and floor are non-negative integers");
    if (typeof clock !== "function") throw bad("clock is a function");
    if (!isObject(options)) throw bad("options is an object");
    for (const [name, value] of Object.entries(options)) {
      if (!OPTION_NAMES.includes(name) || typeof value !== "boolean") throw bad(`bad option ${name}`);
    }
    this.#maxStreak = maxStreak;
    this.#floorMs = scheduledSelfCadenceFloor;
    this.#clock = clock;
    this.#options = { ...options };
  }

  /** The injected clock: the current time in integer milliseconds. */
  get clock() { return this.#clock; }

  /** Consecutive chatter wakes allowed without user input; fixed at construction. */
  get maxStreak() { return this.#maxStreak; }

  /** Consecutive inbox-triggered wakes without user input. */
  get streak() { return this.#streak; }

  /** WAKE-HOST-1: a host may restore the streak; anything but a safe integer below 2^53 - 1 is `invalid_streak`. */
  set streak(value) {
    if (!isNatural(value) || value === Number.MAX_SAFE_INTEGER) throw new WakeGateError("invalid_streak", "bad streak");
    this.#streak = value;
  }

  /** The minimum spacing of exempt scheduled self-wakes, in milliseconds. */
  get scheduledSelfCadenceFloor() { return this.#floorMs; }

  /** WAKE-HOST-2: zero makes every self-wake exempt; anything but a safe natural is `invalid_floor`. */
  set scheduledSelfCadenceFloor(value) {
    if (!isNatural(value)) throw new WakeGateError("invalid_floor", "bad floor");
    this.#floorMs = value;
  }

  /**
   * WAKE-SELF-1: the delivery of a scheduled self-reminder.
   * @param {AgentMessage} message
   * @returns {boolean}
   */
  static isScheduledSelfMail(message) {
    return message.from === message.to && message.text.startsWith(SCHEDULED_PREFIX);
  }

  /** @param {number} nowMs */
  #isRapid(nowMs) { // WAKE-CAD-1, WAKE-CAD-2, WAKE-OPT-3
    if (this.#lastSelfWakeMs === null) return false;
    let elapsed = nowMs - this.#lastSelfWakeMs;
    if (this.#options.clamp_backwards_clock) elapsed = Math.max(0, elapsed);
    return elapsed < this.#floorMs;
  }

  /**
   * Decides, and books, the wake for one pending batch at the clock's current time.
   * Faults in the order of WAKE-IF-5: batch shape, each message, the time, pluginPending, empty batch.
   * @param {readonly AgentMessage[]} pending
   * @param {{ pluginPending?: boolean }} [flags]
   * @returns {InboxWakeDecision}
   */
  wakeDecisionFor(pending, { pluginPending = false } = {}) {
    if (!Array.isArray(pending)) throw new WakeGateError("invalid_batch", "bad batch");
    const messages = pending.map(parseMessage);
    const nowMs = this.#clock();
    if (!isNatural(nowMs)) throw new WakeGateError("invalid_time", "bad now_ms");
    if (typeof pluginPending !== "boolean") throw new WakeGateError("invalid_batch", "bad plugin_pending");
    /**
     * @param {InboxWakeLane} lane @param {boolean} wake @param {boolean} countsAgainstCap
     * @param {InboxWakeRefusalCode | null} [refusalCode] @param {string | null} [refusalReason]
     * @returns {InboxWakeDecision}
     */
    const decision = (lane, wake, countsAgainstCap, refusalCode = null, refusalReason = null) =>
      ({ lane, wake, countsAgainstCap, refusalReason, refusalCode });

    if (messages.some((m) => m.kind === "user")) return decision("userInput", true, false); // WAKE-LANE-1
    if (messages.length === 0 && !pluginPending && this.#options.reject_empty_batch) {
      throw new WakeGateError("empty_batch", "nothing pending"); // WAKE-OPT-4
    }
    const self = messages.some(InboxWakePolicy.isScheduledSelfMail); // WAKE-LANE-2..6
    const lane = self ? "scheduledSelf" : "chatter";
    const rapid = self && this.#isRapid(nowMs);
    if (self && !this.#options.cadence_from_allowed_wakes) this.#lastSelfWakeMs = nowMs; // WAKE-CAD-3

    if (self && !rapid) { // WAKE-CAD-4
      this.#lastSelfWakeMs = nowMs;
      return decision(lane, true, false);
    }
    if (this.#streak >= this.#maxStreak) { // WAKE-CAP-1, WAKE-CAD-5
      this.#refusedSinceRearm = true;
      return self
        ? decision(lane, false, true, "self_spin_cap", selfSpinReason(this.#floorMs, this.#maxStreak))
        : decision(lane, false, true, "chatter_cap", chatterReason(this.#streak, this.#maxStreak));
    }
    if (self) this.#lastSelfWakeMs = nowMs; // WAKE-CAP-2, WAKE-CAD-6
    this.#streak += 1;
    this.#announced = false;
    this.#refusedSinceRearm = false;
    return decision(lane, true, true);
  }

  /**
   * True exactly once per refusal episode (WAKE-ANN-1, WAKE-ANN-2, WAKE-OPT-1).
   * @returns {boolean}
   */
  announceRefusal() {
    if (this.#announced) return false;
    if (this.#options.announce_requires_refusal && !this.#refusedSinceRearm) return false;
    this.#announced = true;
    return true;
  }

  /**
   * The user is talking: the streak is 0 and the refusal episode ends (WAKE-RESET-1).
   * @returns {void}
   */
  resetStreak() {
    this.#streak = 0;
    this.#announced = false;
    this.#refusedSinceRearm = false;
  }
}

// -- the harness protocol's view of this machine (adapter.mjs registers it) --
// Each protocol event is one call of the seed-named API; see README.md for the table.

export const FEATURES = OPTION_NAMES.map((name) => `option:${name}`);
const CONFIG_KEYS = configKeys(INTERFACE);

/** @typedef {import("./protocol.mjs").Step} Step */
/** @typedef {import("./protocol.mjs").CaseResult} CaseResult */


/**
 * The protocol's snake_case decision (WAKE-OUT-1) from the seed-named one.
 * @param {InboxWakeDecision} decision
 */
const decisionOutput = (decision) => ({
  lane: decision.lane, wake: decision.wake, counts_against_cap: decision.countsAgainstCap,
  refusal_code: decision.refusalCode, refusal_reason: decision.refusalReason,
});

/**
 * WAKE-IF-1: the policy a protocol config `{max_streak, floor_ms, options}` describes, on the
 * host's clock; an unknown key, a null or a bad value is `invalid_config`. The host machine
 * (host.mjs) builds each session's gate through this too.
 * @param {unknown} config @param {() => number} clock
 * @returns {InboxWakePolicy}
 */
export function policyFromConfig(config, clock) {
  if (!isObject(config)) throw new WakeGateError("invalid_config", "config is an object");
  const unknown = Object.keys(config).filter((key) => !CONFIG_KEYS.includes(key));
  if (unknown.length) throw new WakeGateError("invalid_config", `unknown config key(s): ${unknown}`);
  // A key given as null is passed on as null, which the policy rejects: only an absent key takes the default.
  return new InboxWakePolicy(/** @type {InboxWakePolicySettings} */ ({
    maxStreak: config.max_streak, scheduledSelfCadenceFloor: config.floor_ms, options: config.options, clock,
  }));
}

/**
 * A case's session: the policy, and the clock the `decide` steps set (the host's clock, played by the case).
 */
class WakeGateSession {
  /** @type {unknown} */
  nowMs = null;

  /** @param {Record<string, unknown>} config */
  constructor(config) {
    this.policy = policyFromConfig(config, () => /** @type {number} */ (this.nowMs));
  }

  /**
   * One step of a wake-gate case; a typed error becomes {error: code} with the unchanged streak.
   * @param {Step} step
   * @returns {Record<string, unknown>}
   */
  apply({ event, args = {} }) {
    const policy = this.policy;
    // WAKE-IF-2: the events and their arguments are the interface data's; any other name is
    // invalid_argument (WAKE-IF-3), and an absent argument takes its default there.
    const defined = eventOf(INTERFACE, event);
    if (!defined) throw new Error(`unknown event ${event}`);
    if (!isObject(args)) throw new Error("args is not an object");
    try {
      const extra = unknownArguments(defined, args);
      if (extra.length) throw new WakeGateError("invalid_argument", `unknown argument(s) ${extra}`);
      const given = withDefaults(defined, args);
      switch (event) {
        case "decide": { // a missing plugin_pending takes its default; a null one is invalid (WAKE-IF-3)
          this.nowMs = given.now_ms;
          const decision = policy.wakeDecisionFor(/** @type {AgentMessage[]} */ (given.batch),
            { pluginPending: /** @type {boolean} */ (given.plugin_pending) });
          return { ...decisionOutput(decision), streak: policy.streak };
        }
        case "announce_refusal":
          return { announce: policy.announceRefusal(), streak: policy.streak };
        case "reset_streak":
          policy.resetStreak();
          break;
        case "set_streak":
          policy.streak = /** @type {number} */ (given.value);
          break;
        case "set_floor":
          policy.scheduledSelfCadenceFloor = /** @type {number} */ (given.value);
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
}

/**
 * The port's side of one case: config and steps in, {outputs} or {config_error} out.
 * @param {Record<string, unknown>} config
 * @param {Step[]} steps
 * @returns {CaseResult}
 */
export function runCase(config, steps) {
  return runSteps(WakeGateError, () => new WakeGateSession(config), (session, step) => session.apply(step), steps);
}
