// The wake gate (spec/wake-gate.md), a dependency-free port for Node.js 20.
// Requirement IDs in comments point into the spec.

export const DEFAULT_MAX_STREAK = 10; // WAKE-DEF-1
export const DEFAULT_CADENCE_FLOOR_MS = 30_000; // WAKE-DEF-1
export const SCHEDULED_PREFIX = "[scheduled] "; // WAKE-SELF-1
const OPTION_NAMES = [
  "announce_requires_refusal", // WAKE-F1
  "cadence_from_allowed_wakes", // WAKE-F2
  "clamp_backwards_clock", // WAKE-F3
  "reject_empty_batch", // WAKE-F4
];

export class WakeGateError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

const isNatural = (v) => Number.isSafeInteger(v) && v >= 0;
const isNonEmptyString = (v) => typeof v === "string" && v.length > 0;

// WAKE-MSG-1: exactly kind, from, to, text.
export function parseMessage(raw) {
  const ok =
    raw !== null && typeof raw === "object" && !Array.isArray(raw) &&
    Object.keys(raw).sort().join() === "from,kind,text,to" &&
    isNonEmptyString(raw.kind) && isNonEmptyString(raw.from) && isNonEmptyString(raw.to) &&
    typeof raw.text === "string";
  if (!ok) throw new WakeGateError("invalid_message", "malformed message");
  return raw;
}

export const isScheduledSelfMail = (m) => m.from === m.to && m.text.startsWith(SCHEDULED_PREFIX);

const chatterReason = (streak, cap) =>
  `inbox wake refused: ${streak} consecutive inbox wakes without user input (cap ${cap}); ` +
  "the mail stays queued until the next user input";
const selfSpinReason = (floorMs, cap) =>
  "inbox wake refused: busy-spin guard: scheduled self-mail arrives faster than the " +
  `${Math.floor(floorMs / 1000)}s cadence floor and the wake cap of ${cap} is reached; ` +
  "the mail stays queued until the next user input";

export class WakePolicy {
  #streak = 0;
  #lastSelfWakeMs = null;
  #announced = false;
  #refusedSinceRearm = false;

  // WAKE-IF-1: config is an object; absent keys take the defaults, null is invalid.
  constructor(config = {}) {
    const bad = (why) => new WakeGateError("invalid_config", why);
    if (config === null || typeof config !== "object" || Array.isArray(config)) throw bad("config is an object");
    const { max_streak = DEFAULT_MAX_STREAK, floor_ms = DEFAULT_CADENCE_FLOOR_MS, options = {}, ...rest } = config;
    if (Object.keys(rest).length) throw bad(`unknown config key(s): ${Object.keys(rest)}`);
    if (!isNatural(max_streak) || !isNatural(floor_ms)) throw bad("cap and floor are non-negative integers");
    if (options === null || typeof options !== "object" || Array.isArray(options)) throw bad("options is an object");
    for (const [name, value] of Object.entries(options)) {
      if (!OPTION_NAMES.includes(name) || typeof value !== "boolean") throw bad(`bad option ${name}`);
    }
    this.maxStreak = max_streak;
    this.floorMs = floor_ms;
    this.options = options;
  }

  get streak() { return this.#streak; }

  setStreak(value) { // WAKE-HOST-1
    if (!isNatural(value) || value === Number.MAX_SAFE_INTEGER) throw new WakeGateError("invalid_streak", "bad streak");
    this.#streak = value;
  }

  setFloor(value) { // WAKE-HOST-2
    if (!isNatural(value)) throw new WakeGateError("invalid_floor", "bad floor");
    this.floorMs = value;
  }

  #isRapid(nowMs) { // WAKE-CAD-1, WAKE-CAD-2, WAKE-OPT-3
    if (this.#lastSelfWakeMs === null) return false;
    let elapsed = nowMs - this.#lastSelfWakeMs;
    if (this.options.clamp_backwards_clock) elapsed = Math.max(0, elapsed);
    return elapsed < this.floorMs;
  }

  // Faults in the order of WAKE-IF-5: batch shape, each message, now_ms, plugin_pending, empty batch.
  decide(batch, { nowMs, pluginPending = false }) {
    if (!Array.isArray(batch)) throw new WakeGateError("invalid_batch", "bad batch");
    const messages = batch.map(parseMessage);
    if (!isNatural(nowMs)) throw new WakeGateError("invalid_time", "bad now_ms");
    if (typeof pluginPending !== "boolean") throw new WakeGateError("invalid_batch", "bad plugin_pending");
    const decision = (lane, wake, countsAgainstCap, refusalCode = null, refusalReason = null) =>
      ({ lane, wake, counts_against_cap: countsAgainstCap, refusal_code: refusalCode, refusal_reason: refusalReason });

    if (messages.some((m) => m.kind === "user")) return decision("userInput", true, false); // WAKE-LANE-1
    if (messages.length === 0 && !pluginPending && this.options.reject_empty_batch) {
      throw new WakeGateError("empty_batch", "nothing pending"); // WAKE-OPT-4
    }
    const self = messages.some(isScheduledSelfMail); // WAKE-LANE-2..6
    const lane = self ? "scheduledSelf" : "chatter";
    const rapid = self && this.#isRapid(nowMs);
    if (self && !this.options.cadence_from_allowed_wakes) this.#lastSelfWakeMs = nowMs; // WAKE-CAD-3

    if (self && !rapid) { // WAKE-CAD-4
      this.#lastSelfWakeMs = nowMs;
      return decision(lane, true, false);
    }
    if (this.#streak >= this.maxStreak) { // WAKE-CAP-1, WAKE-CAD-5
      this.#refusedSinceRearm = true;
      return self
        ? decision(lane, false, true, "self_spin_cap", selfSpinReason(this.floorMs, this.maxStreak))
        : decision(lane, false, true, "chatter_cap", chatterReason(this.#streak, this.maxStreak));
    }
    if (self) this.#lastSelfWakeMs = nowMs; // WAKE-CAP-2, WAKE-CAD-6
    this.#streak += 1;
    this.#announced = false;
    this.#refusedSinceRearm = false;
    return decision(lane, true, true);
  }

  announceRefusal() { // WAKE-ANN-1, WAKE-ANN-2, WAKE-OPT-1
    if (this.#announced) return false;
    if (this.options.announce_requires_refusal && !this.#refusedSinceRearm) return false;
    this.#announced = true;
    return true;
  }

  resetStreak() { // WAKE-RESET-1
    this.#streak = 0;
    this.#announced = false;
    this.#refusedSinceRearm = false;
  }
}

// -- the harness protocol's view of this machine (adapter.mjs registers it) --

export const FEATURES = [
  "option:announce_requires_refusal",
  "option:cadence_from_allowed_wakes",
  "option:clamp_backwards_clock",
  "option:reject_empty_batch",
];

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

// The port's side of one case: config and steps in, {outputs} or {config_error} out.
export function runCase(config, steps) {
  let policy;
  try {
    policy = new WakePolicy(config);
  } catch (error) {
    if (error instanceof WakeGateError) return { config_error: error.code };
    throw error;
  }
  return { outputs: steps.map((step) => applyStep(policy, step)) };
}
