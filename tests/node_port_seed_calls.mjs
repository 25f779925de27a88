// Runs inputs through the Node port twice: once by calling its seed-named API directly, written
// here from the mapping table in conformance/ports/node/README.md, and once through the port's
// protocol path (the machine module's runCase, which adapter.mjs calls). tests/test_node_port_seed_api.py
// compares the two with each other and with the Python reference.
//
// stdin: {"port": directory, "machine": name, "cases": [...]}; stdout: one JSON list, one entry per case.
import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const request = JSON.parse(readFileSync(0, "utf8"));
/** @param {string} file */
const load = (file) => import(pathToFileURL(path.join(request.port, file)).href);

/** An error the port throws on invalid input carries the spec's code. */
function codeOf(error) {
  if (error instanceof Error && typeof error.code === "string") return error.code;
  throw error;
}
const given = (args, key) => (Object.hasOwn(args, key) ? args[key] : undefined);
const orUndefined = (v) => (v === null ? undefined : v);

async function wakeGate(cases) {
  const api = await load("index.mjs");
  const { runCase } = await load("wake-gate.mjs");
  return cases.map(({ config, steps }) => {
    let now = null;
    const policy = new api.InboxWakePolicy({
      maxStreak: config.max_streak, scheduledSelfCadenceFloor: config.floor_ms, options: config.options,
      clock: () => now,
    });
    const direct = steps.map(({ event, args = {} }) => {
      try {
        let out = {};
        if (event === "decide") {
          now = args.now_ms;
          const d = policy.wakeDecisionFor(args.batch, { pluginPending: given(args, "plugin_pending") });
          out = { lane: d.lane, wake: d.wake, counts_against_cap: d.countsAgainstCap,
            refusal_code: d.refusalCode, refusal_reason: d.refusalReason };
        } else if (event === "announce_refusal") out = { announce: policy.announceRefusal() };
        else if (event === "reset_streak") policy.resetStreak();
        else if (event === "set_streak") policy.streak = args.value;
        else if (event === "set_floor") policy.scheduledSelfCadenceFloor = args.value;
        else throw new Error(`no seed call for ${event}`);
        return { ...out, streak: policy.streak };
      } catch (error) {
        return { error: codeOf(error), streak: policy.streak };
      }
    });
    return { direct: { outputs: direct }, protocol: runCase(config, steps) };
  });
}

async function peerDelivery(cases) {
  const api = await load("index.mjs");
  const { runCase } = await load("peer-delivery.mjs");
  const reasons = (v) => (Array.isArray(v) ? v.map(orUndefined) : v);
  const calls = {
    render_delivery_notice: (a) => ({ text: api.renderCrossSessionDeliveryNotice(a.state, a.count, given(a, "recipients")) }),
    render_dropped_notice: (a) => ({
      text: api.renderCrossSessionDroppedNotice(a.count, given(a, "recipients"), reasons(given(a, "reasons"))) }),
    describe_drop_reasons: (a) => ({ text: api.describePeerDropReasons(reasons(a.reasons)) }),
    recipient_suffix: (a) => ({ text: api.peerRecipientSuffix(a.recipients) }),
    is_receipt_state: (a) => ({ result: api.isPeerDeliveryReceiptState(given(a, "value")) }),
    set_dialog_expiry: (a) => {
      const { value, ms, invalid } = api.resolveCrossSessionDialogExpiry(given(a, "value"));
      return { value, ms, invalid };
    },
  };
  return cases.map(({ config, steps }) => ({
    direct: { outputs: steps.map(({ event, args = {} }) => {
      try { return calls[event](args); } catch (error) { return { error: codeOf(error) }; }
    }) },
    protocol: runCase(config, steps),
  }));
}

async function idleSubscriptions(cases) {
  const api = await load("index.mjs");
  const { runCase } = await load("idle-subscriptions.mjs");
  const calls = {
    sanitise_label: (a) => ({ label: api.peerIdleNoticeLabel(a.raw) ?? null }),
    format_clock: (a) => ({ clock: api.formatPeerNoticeClock(orUndefined(a.epoch_ms), orUndefined(a.utc_offset_min)) }),
    render_notice: (a) => ({ text: api.renderCrossSessionIdleNotice(
      { kind: a.kind, label: a.label, finishedAt: orUndefined(a.finished_at), detail: orUndefined(a.detail) },
      orUndefined(a.utc_offset_min)) }),
    describe_subscription: (a) => ({ text: api.describePeerIdleSubscription(a.address, orUndefined(a.detail_shared)) }),
    is_notice_kind: (a) => ({ is_kind: api.isPeerIdleNoticeKind(given(a, "value")) }),
  };
  // The seed-named functions take valid input only; invalid input is the protocol path's to reject.
  return cases.map(({ config, steps }) => ({
    direct: { outputs: steps.map(({ event, args = {} }) => calls[event](args)) },
    protocol: runCase(config, steps),
  }));
}

async function writerProofs(cases) {
  const api = await load("index.mjs");
  return cases.map(({ refusal: [category, cause, phase, detail, renewalState] }) => {
    const error = new api.PlacementWriterContextError(category, cause, phase, orUndefined(detail), orUndefined(renewalState));
    return { direct: { category: error.category, cause: error.causeClass, phase: error.phase,
      detail: error.detail ?? null, renewal_state: error.renewalState ?? null, message: error.message,
      name: error.name, is_error: error instanceof Error } };
  });
}

async function inboxRefresh(cases) {
  const { InboxRefreshCaseSession, runCase } = await load("inbox-refresh.mjs");
  return cases.map(({ config, steps }) => {
    const session = new InboxRefreshCaseSession(config);
    const direct = steps.map((step) => {
      if (step.event !== "invalidate") return session.apply(step);
      const args = step.args ?? {};
      // The seed's argument: the boolean itself, or a record of only the keys the step gives.
      const input = Object.hasOwn(args, "value") ? args.value : Object.fromEntries(Object.entries(args)
        .map(([key, value]) => [key === "remove_ids" ? "removeIds" : key, value]));
      session.lines = [];
      session.cache.invalidate(input);
      return { log: [...session.lines] };
    });
    return { direct: { outputs: direct }, protocol: runCase(config, steps) };
  });
}

const MACHINES = {
  "wake-gate": wakeGate, "peer-delivery": peerDelivery, "idle-subscriptions": idleSubscriptions,
  "writer-proofs": writerProofs, "inbox-refresh": inboxRefresh,
};
process.stdout.write(JSON.stringify(await MACHINES[request.machine](request.cases)));
