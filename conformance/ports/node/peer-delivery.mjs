// @ts-check
// Peer delivery (spec/peer-delivery.md), a dependency-free port for Node.js 20.
// Requirement IDs in comments point into the spec. Written from the spec's
// Interface section: config, events, arguments, outputs and fault order.
// The receipt vocabulary, the dialogExpiry resolution and the rendered notices carry the
// names and signatures of seed 001's declarations (peer-notices.d.ts).
//
// The event names, arguments, defaults, config keys, options and vocabularies come from the
// interface data (interface/peer-delivery.interface.json, a copy of spec/peer-delivery.interface.json);
// the seed's typed constants below are checked against it when the module loads.

import {
  agrees, configDefault, configKeys, eventOf, loadInterface, optionNames, unknownArguments, vocabulary,
  withConfigDefaults, withDefaults,
} from "./interface-data.mjs";
import { CodedError, runSteps } from "./protocol.mjs";

const INTERFACE = loadInterface("peer-delivery");
export const NAME = "peer-delivery";
const OPTION_NAMES = optionNames(INTERFACE);
export const FEATURES = OPTION_NAMES.map((name) => `option:${name}`);
const CONFIG_KEYS = configKeys(INTERFACE);
const SETTINGS = vocabulary(INTERFACE, "settings");
const ATTESTATIONS = vocabulary(INTERFACE, "attestations");

/** The held buffer's capacity per recipient session; a hold past it evicts (PEER-HOLD-2). */
export const PEER_HELD_QUEUE_CAP = 100;
/** The recipient box's capacity, checked at the send station (PEER-SEND-1). */
export const PEER_DELIVERY_BOX_CAP = 50;
/** The relay hops a message may have made before it is a runaway (PEER-JUDGE-1). */
export const PEER_MAX_HOPS = 4;

/** The `dialogExpiry` vocabulary (PEER-EXP-1). */
export const CROSS_SESSION_DIALOG_EXPIRY_VALUES = /** @type {const} */ (["60s", "5m", "10m", "never"]);
Object.freeze(CROSS_SESSION_DIALOG_EXPIRY_VALUES);
/** @typedef {(typeof CROSS_SESSION_DIALOG_EXPIRY_VALUES)[number]} CrossSessionDialogExpiry */
/** @type {CrossSessionDialogExpiry} */
export const CROSS_SESSION_DIALOG_EXPIRY_DEFAULT = "5m";
/** @type {Readonly<Record<CrossSessionDialogExpiry, number | null>>} Each value's deadline; null is none. */
const EXPIRY_MS = Object.freeze({ "60s": 60_000, "5m": 300_000, "10m": 600_000, never: null });
/**
 * A resolved `dialogExpiry`: `invalid` is true when the input was outside the vocabulary and the
 * default applies, which the caller must announce (PEER-EXP-3).
 * @typedef {object} ResolvedCrossSessionDialogExpiry
 * @property {number | null} ms Milliseconds before a held message expires; null for `never`.
 * @property {CrossSessionDialogExpiry} value
 * @property {boolean} invalid
 */

/** The hold causes (PEER-CAUSE-1). */
export const CROSS_SESSION_HOLD_CAUSES = /** @type {const} */ (
  ["inbound-hold", "starting-up", "mode-mismatch", "no-mode-asserted", "attestation-garbage"]);
Object.freeze(CROSS_SESSION_HOLD_CAUSES);
/** @typedef {(typeof CROSS_SESSION_HOLD_CAUSES)[number]} CrossSessionHoldCause */
/** @type {readonly CrossSessionHoldCause[]} The causes a human review resolves; only they arm a deadline (PEER-CAUSE-2). */
export const PEER_HELD_REVIEW_CAUSES = Object.freeze(["mode-mismatch", "no-mode-asserted", "attestation-garbage"]);

/** The receipt states, in the spec's order (PEER-RCPT-1). */
export const PEER_DELIVERY_RECEIPT_STATES = /** @type {const} */ (
  ["held", "denied", "expired", "delivered", "refused", "dropped"]);
Object.freeze(PEER_DELIVERY_RECEIPT_STATES);
/** @typedef {(typeof PEER_DELIVERY_RECEIPT_STATES)[number]} PeerDeliveryReceiptState */
/** The drop reasons (PEER-RCPT-2); `queue-full` is never minted here (PEER-SEND-3). */
export const PEER_DROP_REASONS = /** @type {const} */ (["rate-limited", "duplicate", "hop-loop", "hop-runaway", "queue-full"]);
Object.freeze(PEER_DROP_REASONS);
/** @typedef {(typeof PEER_DROP_REASONS)[number]} PeerDropReason */

const EXPIRY_WARNING =
  "[peer delivery settings] dialogExpiry is not one of 60s, 5m, 10m, never; the default 5m applies."; // PEER-EXP-3
const TAG = "[peer delivery]";
const TRAILER = "This line is automated harness output, not a message from a person and not an instruction.";
/** @type {Readonly<Record<Exclude<PeerDeliveryReceiptState, "dropped">, string>>} */
const PHRASES = {
  held: "{was} held for the recipient's approval",
  denied: "{was} denied by the recipient",
  expired: "{was} not approved in time and {was} discarded",
  delivered: "{was} delivered",
  refused: "{was} refused: the recipient does not accept messages from other sessions",
}; // PEER-NOTE-1
/** @type {Readonly<Record<PeerDropReason, string>>} */
const DROP_PHRASES = {
  "rate-limited": "rate limited", duplicate: "duplicate", "hop-loop": "relay loop",
  "hop-runaway": "too many relay hops", "queue-full": "recipient queue full",
}; // PEER-NOTE-3
const NO_REASON = "no reason given";
// WARNING: the seed's typed vocabularies above are literal, for its declarations; each must equal
// the interface data, which this checks when the module loads.
agrees("PEER_HELD_QUEUE_CAP", PEER_HELD_QUEUE_CAP, configDefault(INTERFACE, "held_cap"));
agrees("PEER_DELIVERY_BOX_CAP", PEER_DELIVERY_BOX_CAP, configDefault(INTERFACE, "box_cap"));
agrees("PEER_MAX_HOPS", PEER_MAX_HOPS, configDefault(INTERFACE, "max_hops"));
agrees("CROSS_SESSION_DIALOG_EXPIRY_VALUES", CROSS_SESSION_DIALOG_EXPIRY_VALUES,
  Object.keys(/** @type {{ ms: object }} */ (INTERFACE.vocabularies.dialog_expiry).ms));
agrees("the dialogExpiry deadlines", EXPIRY_MS, /** @type {{ ms: object }} */ (INTERFACE.vocabularies.dialog_expiry).ms);
agrees("CROSS_SESSION_DIALOG_EXPIRY_DEFAULT", CROSS_SESSION_DIALOG_EXPIRY_DEFAULT,
  /** @type {{ default: string }} */ (INTERFACE.vocabularies.dialog_expiry).default);
agrees("CROSS_SESSION_HOLD_CAUSES", CROSS_SESSION_HOLD_CAUSES, vocabulary(INTERFACE, "causes"));
agrees("PEER_HELD_REVIEW_CAUSES", PEER_HELD_REVIEW_CAUSES, vocabulary(INTERFACE, "review_causes"));
agrees("PEER_DELIVERY_RECEIPT_STATES", PEER_DELIVERY_RECEIPT_STATES, vocabulary(INTERFACE, "receipt_states"));
agrees("the rendered states", Object.keys(PHRASES), vocabulary(INTERFACE, "rendered_states"));
agrees("PEER_DROP_REASONS", PEER_DROP_REASONS, vocabulary(INTERFACE, "drop_reasons"));
agrees("the drop phrases", DROP_PHRASES, INTERFACE.vocabularies.drop_reason_phrases);
const LABEL_MAX = 48; // PEER-LABEL-1
const BLANKED = /[\p{Cc}\p{Cf}\p{Cs}\p{Zs}\p{Zl}\p{Zp}\[\]<>«»"]/gu;

/**
 * @typedef {"invalid_config" | "invalid_argument" | "invalid_message" | "invalid_recipient" | "invalid_time"
 *   | "invalid_ticket" | "not_held" | "invalid_count" | "invalid_state" | "invalid_recipients"
 *   | "invalid_reasons" | "box_full"} PeerDeliveryErrorCode
 */

/** @extends {CodedError<PeerDeliveryErrorCode>} */
export class PeerDeliveryError extends CodedError {}

/** @param {PeerDeliveryErrorCode} code @param {string} message @returns {never} */
const fail = (code, message) => { throw new PeerDeliveryError(code, message); };
/** @param {unknown} v @returns {v is number} */
const isNatural = (v) => Number.isSafeInteger(v) && /** @type {number} */ (v) >= 0;
/** @param {unknown} v @returns {v is number} */
const isPositive = (v) => Number.isSafeInteger(v) && /** @type {number} */ (v) >= 1;
/** @param {unknown} v @returns {v is Record<string, unknown>} */
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
/** @param {unknown} v @returns {v is string | null} */
const isMode = (v) => v === null || (typeof v === "string" && v.length > 0);
/** @param {object} object @param {PropertyKey} key */
const has = (object, key) => Object.prototype.hasOwnProperty.call(object, key);
/** @param {readonly string[]} list @param {unknown} v @returns {boolean} */
const isOneOf = (list, v) => typeof v === "string" && list.includes(v);

// -- rendering ------------------------------------------------------------------------

/**
 * PEER-LABEL-1: a recipient label made safe for a notice.
 * @param {string} raw
 * @returns {string}
 */
export function renderLabel(raw) {
  const collapsed = raw.replace(BLANKED, " ").split(" ").filter((part) => part).join(" ");
  return [...collapsed].slice(0, LABEL_MAX).join("").replace(/ +$/, "");
}

/** @param {unknown} v @returns {readonly string[]} */
const checkRecipients = (v) =>
  Array.isArray(v) && v.every((r) => typeof r === "string") ? v : fail("invalid_recipients", "recipients must be a list of strings");
/** @param {unknown} v @returns {readonly (PeerDropReason | undefined)[]} */
const checkReasons = (v) =>
  Array.isArray(v) && v.every((r) => r === undefined || isOneOf(PEER_DROP_REASONS, r))
    ? v : fail("invalid_reasons", "reasons must be drop reasons or undefined");
/** @param {unknown} v @returns {number} */
const checkCount = (v) => (isPositive(v) ? v : fail("invalid_count", "count must be an integer in [1, 2**53 - 1]"));

/**
 * PEER-NOTE-4: " to A, B and C" for the unique non-empty labels, at most three named.
 * @param {readonly string[]} recipients
 * @returns {string}
 */
export function peerRecipientSuffix(recipients) {
  // Each label once, in first-seen order, by a Set (looked up in an array, 80,000 recipients took 7 s).
  const labels = [...new Set(checkRecipients(recipients).map((raw) => renderLabel(raw)).filter((label) => label))];
  if (labels.length === 0) return "";
  if (labels.length <= 3) {
    return ` to ${labels.length === 1 ? labels[0] : `${labels.slice(0, -1).join(", ")} and ${labels.at(-1)}`}`;
  }
  const rest = labels.length - 3;
  return ` to ${labels.slice(0, 3).join(", ")} and ${rest} ${rest === 1 ? "other" : "others"}`;
}

/**
 * PEER-NOTE-3: each reason's phrase once, in order of first occurrence; undefined is "no reason given".
 * @param {readonly (PeerDropReason | undefined)[]} reasons
 * @returns {string}
 */
export function describePeerDropReasons(reasons) {
  /** @type {string[]} */
  const phrases = [];
  for (const reason of checkReasons(reasons)) {
    const phrase = reason === undefined ? NO_REASON : DROP_PHRASES[reason];
    if (!phrases.includes(phrase)) phrases.push(phrase);
  }
  return phrases.length ? phrases.join(", ") : NO_REASON;
}

/** @param {number} count @returns {[string, string]} */
const subject = (count) => (count === 1 ? ["1 message", "was"] : [`${count} messages`, "were"]);

/**
 * PEER-NOTE-1: the notice for `count` receipts of one non-drop state.
 * @param {Exclude<PeerDeliveryReceiptState, "dropped">} state
 * @param {number} count
 * @param {readonly string[]} [recipients]
 * @returns {string}
 */
export function renderCrossSessionDeliveryNotice(state, count, recipients = []) {
  if (typeof state !== "string" || !has(PHRASES, state)) fail("invalid_state", "state must be a non-drop receipt state");
  const [noun, was] = subject(checkCount(count));
  const suffix = peerRecipientSuffix(recipients);
  return `${TAG} ${noun}${suffix} ${PHRASES[state].replaceAll("{was}", was)}. ${TRAILER}`;
}

/**
 * PEER-NOTE-2: the notice for `count` messages dropped at the recipient's ingress guard.
 * @param {number} count
 * @param {readonly string[]} [recipients]
 * @param {readonly (PeerDropReason | undefined)[]} [reasons]
 * @returns {string}
 */
export function renderCrossSessionDroppedNotice(count, recipients = [], reasons = []) {
  const [noun, was] = subject(checkCount(count));
  const suffix = peerRecipientSuffix(recipients);
  return `${TAG} ${noun}${suffix} ${was} dropped by the recipient's ingress guard (${describePeerDropReasons(reasons)}). ${TRAILER}`;
}

/**
 * PEER-RCPT-4: true exactly for the six state strings.
 * @param {unknown} v
 * @returns {v is PeerDeliveryReceiptState}
 */
export const isPeerDeliveryReceiptState = (v) => isOneOf(PEER_DELIVERY_RECEIPT_STATES, v);

/**
 * PEER-EXP-2: undefined (absent), null and "default" give the default; a member gives itself; anything
 * else gives the default with `invalid` true.
 * @param {unknown} raw
 * @returns {ResolvedCrossSessionDialogExpiry}
 */
export function resolveCrossSessionDialogExpiry(raw) {
  if (typeof raw === "string" && has(EXPIRY_MS, raw)) {
    const value = /** @type {CrossSessionDialogExpiry} */ (raw);
    return { value, ms: EXPIRY_MS[value], invalid: false };
  }
  const invalid = !(raw === undefined || raw === null || raw === "default");
  return { value: CROSS_SESSION_DIALOG_EXPIRY_DEFAULT, ms: EXPIRY_MS[CROSS_SESSION_DIALOG_EXPIRY_DEFAULT], invalid };
}

// -- judgement ------------------------------------------------------------------------

/** @typedef {"accept" | "hold" | "refuse" | null} RecipientSetting */
/** @typedef {{ setting: RecipientSetting, startingUp: boolean, mode: string | null }} Recipient */
/**
 * What the sender's host says about one message (the `send_message` arguments).
 * @typedef {object} MessageFacts
 * @property {string} sender
 * @property {string | null} senderMode
 * @property {"valid" | "garbage" | "absent"} attestation
 * @property {number} hops
 * @property {boolean} loop
 * @property {boolean} duplicate
 * @property {boolean} rateLimited
 */
/**
 * @typedef {{ state: "dropped", reason: PeerDropReason } | { state: "refused" | "delivered" }
 *   | { state: "held", cause: CrossSessionHoldCause }} Verdict
 */
/**
 * @typedef {object} Receipt PEER-IF-2
 * @property {number} ticket
 * @property {string} sender
 * @property {PeerDeliveryReceiptState} state
 * @property {CrossSessionHoldCause | null} cause
 * @property {PeerDropReason | null} reason
 */
/** @typedef {{ ticket: number, facts: MessageFacts, cause: CrossSessionHoldCause, deadline: number | bigint | null }} HeldEntry */
/** @typedef {{ ticket: number, sender: string, cause: CrossSessionHoldCause, deadline_ms: number | bigint | null }} HeldOutput */
/** PEER-IF-2: the state block every stateful event's output carries. @typedef {{ receipts: Receipt[], held: HeldOutput[], box: number }} DeliveryState */
/** @typedef {import("./protocol.mjs").Args} Args */

/**
 * PEER-JUDGE-1, first match wins; a drain round skips the ingress guard (G1-G4).
 * @param {MessageFacts} facts @param {Recipient} recipient @param {number} maxHops @param {boolean} atIngress
 * @returns {Verdict}
 */
function judge(facts, recipient, maxHops, atIngress) {
  if (atIngress) {
    if (facts.loop) return { state: "dropped", reason: "hop-loop" };
    if (facts.hops > maxHops) return { state: "dropped", reason: "hop-runaway" };
    if (facts.duplicate) return { state: "dropped", reason: "duplicate" };
    if (facts.rateLimited) return { state: "dropped", reason: "rate-limited" };
  }
  if (recipient.setting === "refuse") return { state: "refused" };
  if (facts.attestation === "garbage") return { state: "held", cause: "attestation-garbage" };
  if (recipient.setting === "accept") return { state: "delivered" };
  if (recipient.setting === "hold") return { state: "held", cause: "inbound-hold" };
  if (recipient.startingUp) return { state: "held", cause: "starting-up" };
  if (facts.senderMode === null || recipient.mode === null) return { state: "held", cause: "no-mode-asserted" };
  if (facts.senderMode !== recipient.mode) return { state: "held", cause: "mode-mismatch" };
  return { state: "delivered" };
}

/**
 * @param {number} ticket @param {string} sender @param {PeerDeliveryReceiptState} state
 * @param {CrossSessionHoldCause | null} [cause] @param {PeerDropReason | null} [reason]
 * @returns {Receipt}
 */
const receipt = (ticket, sender, state, cause = null, reason = null) => ({ ticket, sender, state, cause, reason });

/**
 * @param {unknown} setting @param {unknown} startingUp @param {unknown} mode
 * @param {"invalid_config" | "invalid_recipient"} code
 */
function checkRecipientArgs(setting, startingUp, mode, code) {
  if (setting !== undefined && setting !== null && !isOneOf(SETTINGS, setting)) fail(code, "setting must be accept, hold, refuse or null");
  if (startingUp !== undefined && typeof startingUp !== "boolean") fail(code, "starting_up must be a boolean");
  if (mode !== undefined && !isMode(mode)) fail(code, "mode must be a non-empty string or null");
}

export class PeerDelivery {
  /** @param {unknown} config PEER-IF-1 */
  constructor(config) {
    if (!isObject(config)) throw new PeerDeliveryError("invalid_config", "config must be an object");
    for (const key of Object.keys(config)) if (!CONFIG_KEYS.includes(key)) fail("invalid_config", `unknown config key ${key}`);
    // Absent keys take the interface data's defaults; a null stays null (and is checked).
    const { held_cap, box_cap, max_hops, setting, starting_up, mode, options } = withConfigDefaults(INTERFACE, config);
    if (!isPositive(held_cap)) throw new PeerDeliveryError("invalid_config", "held_cap");
    if (!isNatural(box_cap)) throw new PeerDeliveryError("invalid_config", "box_cap");
    if (!isNatural(max_hops)) throw new PeerDeliveryError("invalid_config", "max_hops");
    checkRecipientArgs(setting, starting_up, mode, "invalid_config");
    if (!isObject(options)) throw new PeerDeliveryError("invalid_config", "options must be an object");
    for (const [name, value] of Object.entries(options)) {
      if (!OPTION_NAMES.includes(name) || typeof value !== "boolean") fail("invalid_config", `bad option ${name}`);
    }
    this.heldCap = held_cap;
    this.boxCap = box_cap;
    this.maxHops = max_hops;
    /** @type {Record<string, boolean>} */
    this.options = Object.fromEntries(OPTION_NAMES.map((name) => [name, options[name] === true]));
    /** @type {Recipient} */
    this.recipient = {
      setting: /** @type {RecipientSetting} */ (setting), startingUp: /** @type {boolean} */ (starting_up),
      mode: /** @type {string | null} */ (mode),
    };
    this.now = 0;
    this.box = 0;
    /** @type {HeldEntry[]} */
    this.held = [];
    this.nextTicket = 1;
    /** @type {number | null} */
    this.expiryMs = EXPIRY_MS[CROSS_SESSION_DIALOG_EXPIRY_DEFAULT];
  }

  /**
   * PEER-EXP-4, PEER-OPT-3. The sum is exact: a BigInt past 2^53 - 1 (a clock near the top of its
   * range), which compares with the clock's numbers exactly and is written out as its digits.
   * @param {CrossSessionHoldCause} cause @returns {number | bigint | null}
   */
  deadline(cause) {
    const arms = PEER_HELD_REVIEW_CAUSES.includes(cause) || this.options.deadline_for_waiting_holds;
    if (!arms || this.expiryMs === null) return null;
    const sum = this.now + this.expiryMs;
    return Number.isSafeInteger(sum) ? sum : BigInt(this.now) + BigInt(this.expiryMs);
  }

  /** @param {Receipt[]} receipts @param {Record<string, unknown>} [extra] @returns {DeliveryState} */
  state(receipts, extra = {}) {
    return { receipts, held: this.heldOutput(), box: this.box, ...extra };
  }

  /** The buffer as an output lists it, oldest first (PEER-IF-2). @returns {HeldOutput[]} */
  heldOutput() {
    return this.held.map((e) => ({ ticket: e.ticket, sender: e.facts.sender, cause: e.cause, deadline_ms: e.deadline }));
  }

  /** @param {Args} args */
  send_message({ sender, sender_mode, attestation, hops, loop, duplicate, rate_limited }) {
    if (typeof sender !== "string" || sender.length === 0) return fail("invalid_message", "sender");
    if (!isMode(sender_mode)) return fail("invalid_message", "sender_mode");
    if (!isOneOf(ATTESTATIONS, attestation)) fail("invalid_message", "attestation");
    if (!isNatural(hops)) return fail("invalid_message", "hops");
    for (const flag of [loop, duplicate, rate_limited]) if (typeof flag !== "boolean") fail("invalid_message", "flag");
    const ticket = this.nextTicket++; // PEER-SEND-2
    if (this.box >= this.boxCap) return this.state([], { ticket, send_error: "queue_full" }); // PEER-SEND-1
    /** @type {MessageFacts} */
    const facts = {
      sender, senderMode: sender_mode, attestation: /** @type {MessageFacts["attestation"]} */ (attestation), hops,
      loop: loop === true, duplicate: duplicate === true, rateLimited: rate_limited === true,
    };
    const verdict = judge(facts, this.recipient, this.maxHops, true);
    /** @type {Receipt[]} */
    const receipts = [];
    if (verdict.state === "delivered") {
      this.box += 1;
      receipts.push(receipt(ticket, sender, "delivered"));
    } else if (verdict.state === "held") {
      this.held.push({ ticket, facts, cause: verdict.cause, deadline: this.deadline(verdict.cause) });
      receipts.push(receipt(ticket, sender, "held", verdict.cause));
      if (this.held.length > this.heldCap) { // PEER-HOLD-2, PEER-OPT-1
        let position = 0;
        if (this.options.fair_eviction) {
          // Counted once per sender, in one pass (a count per entry was cubic over many evictions), and
          // the most found by a loop: `Math.max(...counts)` throws past about 150,000 arguments.
          /** @type {Map<string, number>} */
          const counts = new Map();
          for (const e of this.held) counts.set(e.facts.sender, (counts.get(e.facts.sender) ?? 0) + 1);
          let most = 0;
          for (const n of counts.values()) if (n > most) most = n;
          position = this.held.findIndex((e) => counts.get(e.facts.sender) === most);
        }
        const [evicted] = this.held.splice(position, 1);
        receipts.push(receipt(evicted.ticket, evicted.facts.sender, "expired"));
      }
    } else if (verdict.state === "dropped") {
      receipts.push(receipt(ticket, sender, "dropped", null, verdict.reason));
    } else {
      receipts.push(receipt(ticket, sender, verdict.state));
    }
    return this.state(receipts, { ticket, send_error: null });
  }

  /** @param {Args} args PEER-SET-1 */
  set_recipient({ setting, starting_up, mode }) {
    checkRecipientArgs(setting, starting_up, mode, "invalid_recipient");
    if (setting !== undefined) this.recipient.setting = /** @type {RecipientSetting} */ (setting);
    if (starting_up !== undefined) this.recipient.startingUp = /** @type {boolean} */ (starting_up);
    if (mode !== undefined) this.recipient.mode = /** @type {string | null} */ (mode);
    return this.state([]);
  }

  /** @param {Args} args PEER-EXP-2, PEER-EXP-3: an absent value is undefined, the seed's "not given". */
  set_dialog_expiry(args) {
    const resolved = resolveCrossSessionDialogExpiry(has(args, "value") ? args.value : undefined);
    this.expiryMs = resolved.ms;
    return this.state([], { ...resolved, warning: resolved.invalid ? EXPIRY_WARNING : null });
  }

  /** @param {Args} args PEER-TIME-1 */
  advance({ now_ms }) {
    if (!isNatural(now_ms) || now_ms < this.now) return fail("invalid_time", "now_ms");
    this.now = now_ms;
    const due = this.held.filter((e) => e.deadline !== null && e.deadline <= now_ms);
    this.held = this.held.filter((e) => e.deadline === null || e.deadline > now_ms);
    return this.state(due.map((e) => receipt(e.ticket, e.facts.sender, "expired")));
  }

  drain() { // PEER-DRAIN-1..3
    /** @type {HeldEntry[]} */
    const kept = [];
    /** @type {Receipt[]} */
    const receipts = [];
    for (const entry of this.held) {
      if (PEER_HELD_REVIEW_CAUSES.includes(entry.cause)) {
        kept.push(entry);
        continue;
      }
      const verdict = judge(entry.facts, this.recipient, this.maxHops, false);
      if (verdict.state === "delivered") {
        if (this.options.release_respects_box_cap && this.box >= this.boxCap) {
          kept.push(entry);
          continue;
        }
        this.box += 1;
        receipts.push(receipt(entry.ticket, entry.facts.sender, "delivered"));
      } else if (verdict.state === "refused") {
        receipts.push(receipt(entry.ticket, entry.facts.sender, "refused"));
      } else if (verdict.state === "held") {
        kept.push({ ...entry, cause: verdict.cause, deadline: entry.deadline ?? this.deadline(verdict.cause) });
      }
    }
    this.held = kept;
    return this.state(receipts);
  }

  /** @param {unknown} ticket @returns {number} the entry's index (PEER-HOLD-4) */
  find(ticket) {
    if (!isPositive(ticket)) return fail("invalid_ticket", "ticket");
    const index = this.held.findIndex((e) => e.ticket === ticket);
    if (index < 0) fail("not_held", `ticket ${ticket} is not held`);
    return index;
  }

  /** @param {Args} args PEER-HOLD-3, PEER-HOLD-5, PEER-OPT-2 */
  approve({ ticket }) {
    const index = this.find(ticket);
    if (this.options.release_respects_box_cap && this.box >= this.boxCap) fail("box_full", "the box is full");
    const [entry] = this.held.splice(index, 1);
    this.box += 1;
    return this.state([receipt(entry.ticket, entry.facts.sender, "delivered")]);
  }

  /** @param {Args} args PEER-HOLD-3 */
  deny({ ticket }) {
    const [entry] = this.held.splice(this.find(ticket), 1);
    return this.state([receipt(entry.ticket, entry.facts.sender, "denied")]);
  }

  /** @param {Args} args PEER-HOLD-6 */
  take({ count }) {
    this.box -= Math.min(checkCount(count), this.box);
    return this.state([]);
  }
}

// -- the case driver (PEER-IF-2..4) ------------------------------------------------------
// Each protocol event is one call: the stateful ones of PeerDelivery, the pure ones of the
// seed-named functions above (README.md has the table). JSON has no undefined, so an absent
// argument is passed as undefined (the seed's "not given") and a null drop reason as undefined.

/** @typedef {import("./protocol.mjs").Step} Step */
/** @typedef {import("./protocol.mjs").CaseResult} CaseResult */
/** @typedef {"send_message" | "set_recipient" | "set_dialog_expiry" | "advance" | "drain" | "approve" | "deny" | "take"} StatefulEvent */

/** @type {readonly string[]} The events of PeerDelivery's methods: those that are not pure. */
const STATEFUL = INTERFACE.events.filter((event) => !event.pure).map((event) => event.name);
/** @param {Args} args @param {string} key @returns {unknown} */
const given = (args, key) => (has(args, key) ? args[key] : undefined);
/** A protocol list of drop reasons, with null for "no reason", as the seed's list with undefined. @param {unknown} v */
const reasonsArgument = (v) => (Array.isArray(v) ? v.map((r) => (r === null ? undefined : r)) : v);
/** @typedef {(args: Args) => Record<string, unknown>} PureCall */
/** @type {Record<string, PureCall>} The pure events, each one seed-named function. */
const PURE = {
  render_delivery_notice: (
    (a) => ({ text: renderCrossSessionDeliveryNotice(/** @type {Exclude<PeerDeliveryReceiptState, "dropped">} */ (a.state),
      /** @type {number} */ (a.count), /** @type {string[] | undefined} */ (given(a, "recipients"))) })),
  render_dropped_notice: (
    (a) => ({ text: renderCrossSessionDroppedNotice(/** @type {number} */ (a.count),
      /** @type {string[] | undefined} */ (given(a, "recipients")),
      /** @type {PeerDropReason[] | undefined} */ (reasonsArgument(given(a, "reasons")))) })),
  describe_drop_reasons:
    (a) => ({ text: describePeerDropReasons(/** @type {PeerDropReason[]} */ (reasonsArgument(a.reasons))) }),
  recipient_suffix: (a) => ({ text: peerRecipientSuffix(/** @type {string[]} */ (a.recipients)) }),
  is_receipt_state: (a) => ({ result: isPeerDeliveryReceiptState(a.value) }),
};

/**
 * The arguments the call gets, over the interface data's defaults: a name the event does not
 * define is invalid_argument (PEER-IF-4, first).
 * @param {string} event @param {Args} args
 * @returns {Args}
 */
function callArguments(event, args) {
  const defined = eventOf(INTERFACE, event);
  if (!defined) throw new Error(`unknown peer-delivery event ${event}`);
  for (const key of unknownArguments(defined, args)) fail("invalid_argument", `${event} takes no argument ${key}`);
  return withDefaults(defined, args);
}

/**
 * `null` stays a value; only a missing key is absent (undefined).
 * @param {PeerDelivery} delivery @param {Step} step
 * @returns {Record<string, unknown>}
 */
function applyStep(delivery, { event, args = {} }) {
  if (has(PURE, event)) {
    try {
      return PURE[event](callArguments(event, args));
    } catch (error) {
      if (error instanceof PeerDeliveryError) return { error: error.code };
      throw error;
    }
  }
  if (!STATEFUL.includes(event)) throw new Error(`unknown peer-delivery event ${event}`);
  const stateful = /** @type {StatefulEvent} */ (event);
  try {
    return delivery[stateful](callArguments(event, args));
  } catch (error) {
    if (error instanceof PeerDeliveryError) return { error: error.code, ...delivery.state([]) };
    throw error;
  }
}

/**
 * @param {Record<string, unknown>} config @param {Step[]} steps
 * @returns {CaseResult}
 */
export function runCase(config, steps) {
  return runSteps(PeerDeliveryError, () => new PeerDelivery(config), applyStep, steps);
}
