// Peer delivery (spec/peer-delivery.md), a dependency-free port for Node.js 20.
// Requirement IDs in comments point into the spec. Written from the spec's
// Interface section: config, events, arguments, outputs and fault order.

export const NAME = "peer-delivery";
export const FEATURES = [
  "option:fair_eviction",
  "option:release_respects_box_cap",
  "option:deadline_for_waiting_holds",
];
const OPTION_NAMES = ["fair_eviction", "release_respects_box_cap", "deadline_for_waiting_holds"];
const CONFIG_KEYS = ["held_cap", "box_cap", "max_hops", "setting", "starting_up", "mode", "options"];
const SETTINGS = ["accept", "hold", "refuse"];
const ATTESTATIONS = ["valid", "garbage", "absent"];
const RECEIPT_STATES = ["held", "denied", "expired", "delivered", "refused", "dropped"]; // PEER-RCPT-1
const DROP_REASONS = ["rate-limited", "duplicate", "hop-loop", "hop-runaway", "queue-full"]; // PEER-RCPT-2
const REVIEW_CAUSES = ["mode-mismatch", "no-mode-asserted", "attestation-garbage"]; // PEER-CAUSE-2
const EXPIRY_MS = { "60s": 60_000, "5m": 300_000, "10m": 600_000, never: null }; // PEER-EXP-1
const EXPIRY_WARNING =
  "[peer delivery settings] dialogExpiry is not one of 60s, 5m, 10m, never; the default 5m applies."; // PEER-EXP-3
const TAG = "[peer delivery]";
const TRAILER = "This line is automated harness output, not a message from a person and not an instruction.";
const PHRASES = {
  held: "{was} held for the recipient's approval",
  denied: "{was} denied by the recipient",
  expired: "{was} not approved in time and {was} discarded",
  delivered: "{was} delivered",
  refused: "{was} refused: the recipient does not accept messages from other sessions",
}; // PEER-NOTE-1
const DROP_PHRASES = {
  "rate-limited": "rate limited", duplicate: "duplicate", "hop-loop": "relay loop",
  "hop-runaway": "too many relay hops", "queue-full": "recipient queue full",
}; // PEER-NOTE-3
const NO_REASON = "no reason given";
const LABEL_MAX = 48; // PEER-LABEL-1
const BLANKED = /[\p{Cc}\p{Cf}\p{Cs}\p{Zs}\p{Zl}\p{Zp}\[\]<>«»"]/gu;

export class PeerDeliveryError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

const fail = (code, message) => { throw new PeerDeliveryError(code, message); };
const isNatural = (v) => Number.isSafeInteger(v) && v >= 0;
const isPositive = (v) => Number.isSafeInteger(v) && v >= 1;
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const isMode = (v) => v === null || (typeof v === "string" && v.length > 0);
const has = (object, key) => Object.prototype.hasOwnProperty.call(object, key);

// -- rendering ------------------------------------------------------------------------

export function renderLabel(raw) { // PEER-LABEL-1
  const collapsed = raw.replace(BLANKED, " ").split(" ").filter((part) => part).join(" ");
  return [...collapsed].slice(0, LABEL_MAX).join("").replace(/ +$/, "");
}

const checkRecipients = (v) =>
  Array.isArray(v) && v.every((r) => typeof r === "string") ? v : fail("invalid_recipients", "recipients must be a list of strings");
const checkReasons = (v) =>
  Array.isArray(v) && v.every((r) => r === null || DROP_REASONS.includes(r)) ? v : fail("invalid_reasons", "reasons must be drop reasons or null");
const checkCount = (v) => (isPositive(v) ? v : fail("invalid_count", "count must be an integer in [1, 2**53 - 1]"));

export function recipientSuffix(recipients) { // PEER-NOTE-4
  const labels = [];
  for (const raw of checkRecipients(recipients)) {
    const label = renderLabel(raw);
    if (label && !labels.includes(label)) labels.push(label);
  }
  if (labels.length === 0) return "";
  if (labels.length <= 3) {
    return ` to ${labels.length === 1 ? labels[0] : `${labels.slice(0, -1).join(", ")} and ${labels.at(-1)}`}`;
  }
  const rest = labels.length - 3;
  return ` to ${labels.slice(0, 3).join(", ")} and ${rest} ${rest === 1 ? "other" : "others"}`;
}

export function describeDropReasons(reasons) { // PEER-NOTE-3
  const phrases = [];
  for (const reason of checkReasons(reasons)) {
    const phrase = reason === null ? NO_REASON : DROP_PHRASES[reason];
    if (!phrases.includes(phrase)) phrases.push(phrase);
  }
  return phrases.length ? phrases.join(", ") : NO_REASON;
}

const subject = (count) => (count === 1 ? ["1 message", "was"] : [`${count} messages`, "were"]);

export function renderDeliveryNotice(state, count, recipients) { // PEER-NOTE-1
  if (typeof state !== "string" || !has(PHRASES, state)) fail("invalid_state", "state must be a non-drop receipt state");
  const [noun, was] = subject(checkCount(count));
  const suffix = recipientSuffix(recipients);
  return `${TAG} ${noun}${suffix} ${PHRASES[state].replaceAll("{was}", was)}. ${TRAILER}`;
}

export function renderDroppedNotice(count, recipients, reasons) { // PEER-NOTE-2
  const [noun, was] = subject(checkCount(count));
  const suffix = recipientSuffix(recipients);
  return `${TAG} ${noun}${suffix} ${was} dropped by the recipient's ingress guard (${describeDropReasons(reasons)}). ${TRAILER}`;
}

export const isReceiptState = (v) => typeof v === "string" && RECEIPT_STATES.includes(v); // PEER-RCPT-4

export function resolveDialogExpiry(raw, present = true) { // PEER-EXP-2
  if (typeof raw === "string" && has(EXPIRY_MS, raw)) return { value: raw, ms: EXPIRY_MS[raw], invalid: false };
  const invalid = !(!present || raw === null || raw === "default");
  return { value: "5m", ms: 300_000, invalid };
}

// -- judgement ------------------------------------------------------------------------

// PEER-JUDGE-1, first match wins; a drain round skips the ingress guard (rules 1-4).
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

const receipt = (ticket, sender, state, cause = null, reason = null) => ({ ticket, sender, state, cause, reason });

function checkRecipientArgs(setting, startingUp, mode, code) {
  if (setting !== undefined && setting !== null && !SETTINGS.includes(setting)) fail(code, "setting must be accept, hold, refuse or null");
  if (startingUp !== undefined && typeof startingUp !== "boolean") fail(code, "starting_up must be a boolean");
  if (mode !== undefined && !isMode(mode)) fail(code, "mode must be a non-empty string or null");
}

export class PeerDelivery {
  constructor(config) { // PEER-IF-1
    if (!isObject(config)) fail("invalid_config", "config must be an object");
    for (const key of Object.keys(config)) if (!CONFIG_KEYS.includes(key)) fail("invalid_config", `unknown config key ${key}`);
    const { held_cap = 100, box_cap = 50, max_hops = 4, setting = null, starting_up = false, mode = null, options = {} } = config;
    if (!isPositive(held_cap)) fail("invalid_config", "held_cap");
    if (!isNatural(box_cap)) fail("invalid_config", "box_cap");
    if (!isNatural(max_hops)) fail("invalid_config", "max_hops");
    checkRecipientArgs(setting, starting_up, mode, "invalid_config");
    if (!isObject(options)) fail("invalid_config", "options must be an object");
    for (const [name, value] of Object.entries(options)) {
      if (!OPTION_NAMES.includes(name) || typeof value !== "boolean") fail("invalid_config", `bad option ${name}`);
    }
    this.heldCap = held_cap;
    this.boxCap = box_cap;
    this.maxHops = max_hops;
    this.options = Object.fromEntries(OPTION_NAMES.map((name) => [name, options[name] === true]));
    this.recipient = { setting, startingUp: starting_up, mode };
    this.now = 0;
    this.box = 0;
    this.held = []; // {ticket, facts, cause, deadline}
    this.nextTicket = 1;
    this.expiryMs = 300_000;
  }

  deadline(cause) { // PEER-EXP-4, PEER-OPT-3
    const arms = REVIEW_CAUSES.includes(cause) || this.options.deadline_for_waiting_holds;
    return arms && this.expiryMs !== null ? this.now + this.expiryMs : null;
  }

  state(receipts, extra = {}) {
    return {
      receipts,
      held: this.held.map((e) => ({ ticket: e.ticket, sender: e.facts.sender, cause: e.cause, deadline_ms: e.deadline })),
      box: this.box,
      ...extra,
    };
  }

  send_message({ sender, sender_mode = null, attestation = "absent", hops = 0, loop = false, duplicate = false, rate_limited = false }) {
    if (typeof sender !== "string" || sender.length === 0) fail("invalid_message", "sender");
    if (!isMode(sender_mode)) fail("invalid_message", "sender_mode");
    if (!ATTESTATIONS.includes(attestation)) fail("invalid_message", "attestation");
    if (!isNatural(hops)) fail("invalid_message", "hops");
    for (const flag of [loop, duplicate, rate_limited]) if (typeof flag !== "boolean") fail("invalid_message", "flag");
    const ticket = this.nextTicket++; // PEER-SEND-2
    if (this.box >= this.boxCap) return this.state([], { ticket, send_error: "queue_full" }); // PEER-SEND-1
    const facts = { sender, senderMode: sender_mode, attestation, hops, loop, duplicate, rateLimited: rate_limited };
    const verdict = judge(facts, this.recipient, this.maxHops, true);
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
          const count = (s) => this.held.filter((e) => e.facts.sender === s).length;
          const most = Math.max(...this.held.map((e) => count(e.facts.sender)));
          position = this.held.findIndex((e) => count(e.facts.sender) === most);
        }
        const [evicted] = this.held.splice(position, 1);
        receipts.push(receipt(evicted.ticket, evicted.facts.sender, "expired"));
      }
    } else {
      receipts.push(receipt(ticket, sender, verdict.state, null, verdict.reason ?? null));
    }
    return this.state(receipts, { ticket, send_error: null });
  }

  set_recipient({ setting, starting_up, mode }) { // PEER-SET-1
    checkRecipientArgs(setting, starting_up, mode, "invalid_recipient");
    if (setting !== undefined) this.recipient.setting = setting;
    if (starting_up !== undefined) this.recipient.startingUp = starting_up;
    if (mode !== undefined) this.recipient.mode = mode;
    return this.state([]);
  }

  set_dialog_expiry(args) { // PEER-EXP-2, PEER-EXP-3
    const resolved = resolveDialogExpiry(args.value, has(args, "value"));
    this.expiryMs = resolved.ms;
    return this.state([], { ...resolved, warning: resolved.invalid ? EXPIRY_WARNING : null });
  }

  advance({ now_ms }) { // PEER-TIME-1
    if (!isNatural(now_ms) || now_ms < this.now) fail("invalid_time", "now_ms");
    this.now = now_ms;
    const due = this.held.filter((e) => e.deadline !== null && e.deadline <= now_ms);
    this.held = this.held.filter((e) => e.deadline === null || e.deadline > now_ms);
    return this.state(due.map((e) => receipt(e.ticket, e.facts.sender, "expired")));
  }

  drain() { // PEER-DRAIN-1..3
    const kept = [];
    const receipts = [];
    for (const entry of this.held) {
      if (REVIEW_CAUSES.includes(entry.cause)) {
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
      } else {
        kept.push({ ...entry, cause: verdict.cause, deadline: entry.deadline ?? this.deadline(verdict.cause) });
      }
    }
    this.held = kept;
    return this.state(receipts);
  }

  find(ticket) { // PEER-HOLD-4
    if (!isPositive(ticket)) fail("invalid_ticket", "ticket");
    const index = this.held.findIndex((e) => e.ticket === ticket);
    if (index < 0) fail("not_held", `ticket ${ticket} is not held`);
    return index;
  }

  approve({ ticket }) { // PEER-HOLD-3, PEER-HOLD-5, PEER-OPT-2
    const index = this.find(ticket);
    if (this.options.release_respects_box_cap && this.box >= this.boxCap) fail("box_full", "the box is full");
    const [entry] = this.held.splice(index, 1);
    this.box += 1;
    return this.state([receipt(entry.ticket, entry.facts.sender, "delivered")]);
  }

  deny({ ticket }) { // PEER-HOLD-3
    const [entry] = this.held.splice(this.find(ticket), 1);
    return this.state([receipt(entry.ticket, entry.facts.sender, "denied")]);
  }

  take({ count = 1 }) { // PEER-HOLD-6
    this.box -= Math.min(checkCount(count), this.box);
    return this.state([]);
  }
}

// -- the case driver (PEER-IF-2..4) ------------------------------------------------------

const STATEFUL = {
  send_message: ["sender", "sender_mode", "attestation", "hops", "loop", "duplicate", "rate_limited"],
  set_recipient: ["setting", "starting_up", "mode"],
  set_dialog_expiry: ["value"],
  advance: ["now_ms"],
  drain: [],
  approve: ["ticket"],
  deny: ["ticket"],
  take: ["count"],
};
const arg = (args, key, fallback) => (has(args, key) ? args[key] : fallback);
const PURE = {
  render_delivery_notice: [["state", "count", "recipients"],
    (a) => ({ text: renderDeliveryNotice(a.state, a.count, arg(a, "recipients", [])) })],
  render_dropped_notice: [["count", "recipients", "reasons"],
    (a) => ({ text: renderDroppedNotice(a.count, arg(a, "recipients", []), arg(a, "reasons", [])) })],
  describe_drop_reasons: [["reasons"], (a) => ({ text: describeDropReasons(a.reasons) })],
  recipient_suffix: [["recipients"], (a) => ({ text: recipientSuffix(a.recipients) })],
  is_receipt_state: [["value"], (a) => ({ result: isReceiptState(a.value) })],
};

function checkArgumentNames(event, args, names) {
  for (const key of Object.keys(args)) if (!names.includes(key)) fail("invalid_argument", `${event} takes no argument ${key}`);
}

// `null` stays a value; only a missing key is absent (undefined).
function applyStep(delivery, { event, args = {} }) {
  if (has(PURE, event)) {
    const [names, run] = PURE[event];
    try {
      checkArgumentNames(event, args, names);
      return run(args);
    } catch (error) {
      if (error instanceof PeerDeliveryError) return { error: error.code };
      throw error;
    }
  }
  if (!has(STATEFUL, event)) throw new Error(`unknown peer-delivery event ${event}`);
  try {
    checkArgumentNames(event, args, STATEFUL[event]);
    return delivery[event](args);
  } catch (error) {
    if (error instanceof PeerDeliveryError) return { error: error.code, ...delivery.state([]) };
    throw error;
  }
}

export function runCase(config, steps) {
  let delivery;
  try {
    delivery = new PeerDelivery(config);
  } catch (error) {
    if (error instanceof PeerDeliveryError) return { config_error: error.code };
    throw error;
  }
  return { outputs: steps.map((step) => applyStep(delivery, step)) };
}
