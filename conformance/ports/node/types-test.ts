// A type-level test of the package's declarations (types/*.d.mts), as a consumer sees them:
// `tsc -p .` checks this file, and any assertion that does not hold is a compile error.
// Each `@ts-expect-error` line is a call or assignment that a correct signature rejects; if the
// signature wrongly accepted it, the unused directive would itself be an error.
// Nothing here runs: the file is only type-checked.
import {
  CROSS_SESSION_DIALOG_EXPIRY_DEFAULT, CROSS_SESSION_DIALOG_EXPIRY_VALUES, InboxCache, InboxWakePolicy,
  PEER_DELIVERY_RECEIPT_STATES, PEER_DROP_REASONS, PEER_HELD_QUEUE_CAP, PEER_HELD_REVIEW_CAUSES,
  PEER_IDLE_FIRE_DEBOUNCE_MS, PEER_IDLE_HELD_BACKOFF_MS, PEER_IDLE_LABEL_MAX, PEER_IDLE_NOTICE_KINDS,
  PEER_IDLE_OUTSTANDING_CAP, PEER_IDLE_PRIORS_KEPT, PEER_IDLE_SUBSCRIBER_TABLE_CAP, PEER_IDLE_SUBSCRIPTION_TTL_MS,
  PEER_IDLE_UNAVAILABLE_CAUSES, PlacementWriterContextError, defaultMaxInboxWakeStreak,
  defaultScheduledSelfCadenceFloor, describePeerDropReasons, describePeerIdleSubscription, formatPeerNoticeClock,
  isPeerDeliveryReceiptState, isPeerIdleNoticeKind, peerIdleNoticeLabel, peerRecipientSuffix,
  renderCrossSessionDeliveryNotice, renderCrossSessionDroppedNotice, renderCrossSessionIdleNotice,
  resolveCrossSessionDialogExpiry,
} from "inboxspec-node-example";
import type {
  AgentMessage, CrossSessionDialogExpiry, CrossSessionHoldCause, InboxInvalidation, InboxWakeDecision,
  InboxWakeLane, PeerDeliveryReceiptState, PeerDropReason, PeerIdleNoticeFields, PeerIdleNoticeKind,
  ResolvedCrossSessionDialogExpiry,
} from "inboxspec-node-example";

// Exact type equality: true only when each of A and B is assignable to the other, any excluded.
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
function assertType<T extends true>(): T | void { return; }

// -- seed 001: constants ------------------------------------------------------------------------
assertType<Equals<typeof PEER_HELD_QUEUE_CAP, 100>>();
assertType<Equals<typeof PEER_IDLE_SUBSCRIPTION_TTL_MS, 43200000>>();
assertType<Equals<typeof PEER_IDLE_SUBSCRIBER_TABLE_CAP, 32>>();
assertType<Equals<typeof PEER_IDLE_OUTSTANDING_CAP, 32>>();
assertType<Equals<typeof PEER_IDLE_PRIORS_KEPT, 3>>();
assertType<Equals<typeof PEER_IDLE_FIRE_DEBOUNCE_MS, 750>>();
assertType<Equals<typeof PEER_IDLE_HELD_BACKOFF_MS, 30000>>();
assertType<Equals<typeof PEER_IDLE_LABEL_MAX, 100>>();
assertType<Equals<typeof CROSS_SESSION_DIALOG_EXPIRY_VALUES, readonly ["60s", "5m", "10m", "never"]>>();
assertType<Equals<CrossSessionDialogExpiry, "60s" | "5m" | "10m" | "never">>();
assertType<Equals<typeof CROSS_SESSION_DIALOG_EXPIRY_DEFAULT, CrossSessionDialogExpiry>>();
assertType<Equals<typeof PEER_HELD_REVIEW_CAUSES, readonly CrossSessionHoldCause[]>>();
assertType<Equals<CrossSessionHoldCause,
  "inbound-hold" | "starting-up" | "mode-mismatch" | "no-mode-asserted" | "attestation-garbage">>();
assertType<Equals<typeof PEER_IDLE_NOTICE_KINDS, readonly ["idle", "exited", "unavailable", "expired"]>>();
assertType<Equals<PeerIdleNoticeKind, "idle" | "exited" | "unavailable" | "expired">>();
assertType<Equals<typeof PEER_IDLE_UNAVAILABLE_CAUSES,
  "it is shutting down, its subscription table is full, a newer subscription displaced this one, or it answered in a form this version does not recognize">>();

// The union of receipt states, in the spec's order.
assertType<Equals<typeof PEER_DELIVERY_RECEIPT_STATES,
  readonly ["held", "denied", "expired", "delivered", "refused", "dropped"]>>();
assertType<Equals<PeerDeliveryReceiptState, "held" | "denied" | "expired" | "delivered" | "refused" | "dropped">>();
// The PeerDropReason literals: a closed union of the list's words that holds the seed's five
// (the port checks the list itself against the interface data when it loads).
type SeedDropReason = "rate-limited" | "duplicate" | "hop-loop" | "hop-runaway" | "queue-full";
assertType<Equals<PeerDropReason, (typeof PEER_DROP_REASONS)[number]>>();
assertType<Equals<Extract<PeerDropReason, SeedDropReason>, SeedDropReason>>();
assertType<Equals<string extends PeerDropReason ? true : false, false>>();
const reason: PeerDropReason = "hop-loop";
// @ts-expect-error: the vocabulary has no "queue_full" spelt with an underscore
const misspelt: PeerDropReason = "queue_full";
// @ts-expect-error: the vocabulary is closed
PEER_DROP_REASONS.push("too-large");

// -- seed 001: functions --------------------------------------------------------------------------
assertType<Equals<Parameters<typeof resolveCrossSessionDialogExpiry>, [raw: unknown]>>();
assertType<Equals<ReturnType<typeof resolveCrossSessionDialogExpiry>, ResolvedCrossSessionDialogExpiry>>();
assertType<Equals<ResolvedCrossSessionDialogExpiry, { ms: number | null; value: CrossSessionDialogExpiry; invalid: boolean }>>();

assertType<Equals<typeof isPeerDeliveryReceiptState, (v: unknown) => v is PeerDeliveryReceiptState>>();
assertType<Equals<typeof isPeerIdleNoticeKind, (v: unknown) => v is PeerIdleNoticeKind>>();
const maybeState: unknown = "held";
if (isPeerDeliveryReceiptState(maybeState)) assertType<Equals<typeof maybeState, PeerDeliveryReceiptState>>();

assertType<Equals<Parameters<typeof peerRecipientSuffix>, [recipients: readonly string[]]>>();
assertType<Equals<ReturnType<typeof peerRecipientSuffix>, string>>();

assertType<Equals<Parameters<typeof renderCrossSessionDeliveryNotice>,
  [state: Exclude<PeerDeliveryReceiptState, "dropped">, count: number, recipients?: readonly string[]]>>();
assertType<Equals<ReturnType<typeof renderCrossSessionDeliveryNotice>, string>>();
renderCrossSessionDeliveryNotice("held", 2);
// @ts-expect-error: a dropped receipt has its own notice
renderCrossSessionDeliveryNotice("dropped", 1);
// @ts-expect-error: the count is a number
renderCrossSessionDeliveryNotice("held", "1");

assertType<Equals<Parameters<typeof describePeerDropReasons>, [reasons: readonly (PeerDropReason | undefined)[]]>>();
assertType<Equals<ReturnType<typeof describePeerDropReasons>, string>>();
describePeerDropReasons([reason, undefined]);
// @ts-expect-error: "no reason" is undefined, not null
describePeerDropReasons([null]);

assertType<Equals<Parameters<typeof renderCrossSessionDroppedNotice>,
  [count: number, recipients?: readonly string[], reasons?: readonly (PeerDropReason | undefined)[]]>>();
assertType<Equals<ReturnType<typeof renderCrossSessionDroppedNotice>, string>>();
// @ts-expect-error: reasons are drop reasons
renderCrossSessionDroppedNotice(1, [], ["denied"]);

assertType<Equals<Parameters<typeof peerIdleNoticeLabel>, [raw: string]>>();
assertType<Equals<ReturnType<typeof peerIdleNoticeLabel>, string | undefined>>();

// The seed's one argument, plus the reader's fixed UTC offset (IDLE-CLOCK-1), optional.
assertType<Equals<Parameters<typeof formatPeerNoticeClock>, [epochMs: number | undefined, utcOffsetMin?: number]>>();
assertType<Equals<ReturnType<typeof formatPeerNoticeClock>, string>>();
formatPeerNoticeClock(undefined);

assertType<Equals<PeerIdleNoticeFields, { kind: PeerIdleNoticeKind; label: string; finishedAt?: number | undefined; detail?: string | undefined }>>();
assertType<Equals<Parameters<typeof renderCrossSessionIdleNotice>, [n: PeerIdleNoticeFields, utcOffsetMin?: number]>>();
assertType<Equals<ReturnType<typeof renderCrossSessionIdleNotice>, string>>();
renderCrossSessionIdleNotice({ kind: "expired", label: "builder" });
// @ts-expect-error: "held" is a receipt state, not a notice kind
renderCrossSessionIdleNotice({ kind: "held", label: "builder" });
// @ts-expect-error: the label is required
renderCrossSessionIdleNotice({ kind: "idle" });

// The seed's one argument, plus whether the detail is shared (IDLE-TEXT-7), optional.
assertType<Equals<Parameters<typeof describePeerIdleSubscription>, [address: string, detailShared?: boolean]>>();
assertType<Equals<ReturnType<typeof describePeerIdleSubscription>, string>>();

// -- seed 000: InboxWakePolicy ------------------------------------------------------------------------
assertType<Equals<typeof defaultMaxInboxWakeStreak, 10>>();
assertType<Equals<typeof defaultScheduledSelfCadenceFloor, 30000>>();
const policy = new InboxWakePolicy({ clock: () => 0, maxStreak: 3, scheduledSelfCadenceFloor: 1000 });
// @ts-expect-error: the clock is injected; the policy reads none of its own
new InboxWakePolicy({ maxStreak: 3 });
const pending: AgentMessage[] = [{ kind: "agent", from: "me", to: "me", text: "[scheduled] sweep" }];
assertType<Equals<ReturnType<InboxWakePolicy["wakeDecisionFor"]>, InboxWakeDecision>>();
const decision = policy.wakeDecisionFor(pending, { pluginPending: false });
policy.wakeDecisionFor([]);
// @ts-expect-error: pluginPending is a boolean
policy.wakeDecisionFor(pending, { pluginPending: "yes" });
assertType<Equals<typeof decision.lane, InboxWakeLane>>();
assertType<Equals<InboxWakeLane, "userInput" | "scheduledSelf" | "chatter">>();
assertType<Equals<typeof decision.wake, boolean>>();
assertType<Equals<typeof decision.countsAgainstCap, boolean>>();
assertType<Equals<typeof decision.refusalReason, string | null>>();
assertType<Equals<ReturnType<InboxWakePolicy["announceRefusal"]>, boolean>>();
assertType<Equals<ReturnType<InboxWakePolicy["resetStreak"]>, void>>();
policy.streak = 2;
policy.scheduledSelfCadenceFloor = 0;
assertType<Equals<typeof policy.streak, number>>();
assertType<Equals<typeof policy.scheduledSelfCadenceFloor, number>>();
assertType<Equals<typeof policy.maxStreak, number>>();
assertType<Equals<typeof policy.clock, () => number>>();
// @ts-expect-error: the clock is fixed at construction
policy.clock = () => 1;
// @ts-expect-error: maxStreak is fixed at construction
policy.maxStreak = 4;
assertType<Equals<typeof InboxWakePolicy.isScheduledSelfMail, (message: AgentMessage) => boolean>>();

// -- seed 002: PlacementWriterContextError and InboxCache ---------------------------------------------
const refusal = new PlacementWriterContextError("home floor", "missing");
new PlacementWriterContextError("running CLI", "changed", "initial", "changed", "pending");
// @ts-expect-error: not a root category
new PlacementWriterContextError("home", "missing");
// @ts-expect-error: not a cause class
new PlacementWriterContextError("home floor", "gone");
assertType<Equals<typeof refusal.causeClass, "missing" | "changed" | "unavailable">>();
assertType<Equals<typeof refusal.renewalState, "pending" | "staging" | undefined>>();
assertType<Equals<typeof refusal.message, string>>();
// @ts-expect-error: the fields are read-only
refusal.category = "declared writer";
const invalidation: InboxInvalidation = { hard: false, removeIds: ["inbox:1"], added: 2 };
assertType<Equals<Parameters<InboxCache["invalidate"]>, [input?: boolean | InboxInvalidation]>>();
assertType<Equals<ReturnType<InboxCache["invalidate"]>, void>>();
// @ts-expect-error: removeIds are strings
const badInvalidation: InboxInvalidation = { removeIds: [1] };

export { badInvalidation, invalidation, misspelt };
