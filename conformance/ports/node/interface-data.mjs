// @ts-check
// The machines' interface data (spec/<machine>.interface.json, its schema spec/interface.schema.json),
// loaded as any port's adapter may load it: the config keys and their defaults, each event's
// arguments (in fault order) with their defaults, and the vocabularies. The files ship in this
// package under interface/, as `inboxspec spec generate` copies them from the spec.

import { readFileSync } from "node:fs";

/**
 * A config key or an event argument.
 * @typedef {object} InterfaceParameter
 * @property {string} name
 * @property {string} type
 * @property {boolean} [nullable]
 * @property {unknown} [default] the value an absent one takes
 * @property {boolean} [required] absent is rejected with `code`
 * @property {string} [when_absent]
 * @property {string} [code] the error code of a bad value
 * @property {boolean} [null_is_absent] null is taken as absent: the default applies
 * @property {string[]} [part_of] the machine's parts it belongs to
 * @property {"supplies" | "checks"} [runner] a config key the runner adds, or checks before a session sees it
 * @property {boolean} [world] a config key of the scripted world, which the adapter reads itself
 * @property {boolean} [alone] when given, no other argument may be
 * @property {{ field: string, values: string[] }} [only_for] a record field present exactly for these values
 */
/**
 * @typedef {object} InterfaceEvent
 * @property {string} name
 * @property {boolean} [pure]
 * @property {boolean} [harness] a harness step that changes the world between events
 * @property {boolean} [world] an event of the scripted world, which the adapter plays itself
 * @property {string} [extra_argument_error] this event's code for an unknown argument name
 * @property {InterfaceParameter[]} arguments
 * @property {string[]} outputs
 * @property {string[]} [part_of] the machine's parts it belongs to
 */
/**
 * A named value type: its label for people, and a JSON Schema fragment in which
 * {"$vocabulary": NAME} stands for {"enum": vocabularies[NAME]}.
 * @typedef {{ label: string, schema: Record<string, unknown> }} InterfaceType
 */
/**
 * @typedef {object} MachineInterface
 * @property {string} machine
 * @property {Record<string, InterfaceType>} [types]
 * @property {string} [extra_argument_error] the code of an argument name the event does not define
 * @property {{ error: string, keys: InterfaceParameter[], options_vocabulary?: string }} config
 * @property {InterfaceEvent[]} events
 * @property {string} [extra_argument_error]
 * @property {Record<string, { description?: string, fields: InterfaceParameter[] }>} [records]
 * @property {Record<string, unknown>} vocabularies
 */

/**
 * The interface data of one machine.
 * @param {string} machine
 * @returns {MachineInterface}
 */
export function loadInterface(machine) {
  const text = readFileSync(new URL(`./interface/${machine}.interface.json`, import.meta.url), "utf8");
  const data = /** @type {MachineInterface} */ (JSON.parse(text));
  if (data.machine !== machine) throw new Error(`interface/${machine}.interface.json describes ${data.machine}`);
  return data;
}

/** @param {unknown} value @returns {unknown} A fresh copy of a JSON default. */
const copy = (value) => (value === undefined ? undefined : structuredClone(value));

/**
 * @param {MachineInterface} data @param {string} name
 * @returns {InterfaceEvent | undefined}
 */
export const eventOf = (data, name) => data.events.find((event) => event.name === name);

/**
 * A list vocabulary, such as the drop reasons.
 * @param {MachineInterface} data @param {string} name
 * @returns {readonly string[]}
 */
export function vocabulary(data, name) {
  const words = data.vocabularies[name];
  if (!Array.isArray(words)) throw new Error(`${data.machine}: no list vocabulary ${name}`);
  return Object.freeze(words.map(String));
}

/** @param {MachineInterface} data @returns {readonly string[]} The finding options. */
export const optionNames = (data) => (data.config.options_vocabulary ? vocabulary(data, data.config.options_vocabulary) : []);

/** @param {MachineInterface} data @returns {readonly string[]} */
export const configKeys = (data) => data.config.keys.map((key) => key.name);

/**
 * A config key's default.
 * @param {MachineInterface} data @param {string} name
 * @returns {unknown}
 */
export function configDefault(data, name) {
  const key = data.config.keys.find((k) => k.name === name);
  if (!key || !("default" in key)) throw new Error(`${data.machine}: config key ${name} has no default`);
  return copy(key.default);
}

/**
 * `config` over the defaults of its keys (a key given as null stays null).
 * @param {MachineInterface} data @param {Record<string, unknown>} config
 * @returns {Record<string, unknown>}
 */
export function withConfigDefaults(data, config) {
  /** @type {Record<string, unknown>} */
  const merged = {};
  for (const key of data.config.keys) if ("default" in key) merged[key.name] = copy(key.default);
  return { ...merged, ...config };
}

/**
 * The argument names an event does not define, in the order given.
 * @param {InterfaceEvent} event @param {Record<string, unknown>} args
 * @returns {string[]}
 */
export const unknownArguments = (event, args) =>
  Object.keys(args).filter((name) => !event.arguments.some((argument) => argument.name === name));

/**
 * `args` over the event's defaults; an argument without a default stays absent, and a null
 * that means absent (`null_is_absent`) takes the default.
 * @param {InterfaceEvent} event @param {Record<string, unknown>} args
 * @returns {Record<string, unknown>}
 */
export function withDefaults(event, args) {
  /** @type {Record<string, unknown>} */
  const merged = {};
  for (const argument of event.arguments) if ("default" in argument) merged[argument.name] = copy(argument.default);
  const given = { ...args };
  for (const argument of event.arguments) {
    if (argument.null_is_absent && given[argument.name] === null) delete given[argument.name];
  }
  return { ...merged, ...given };
}

/**
 * The code of an argument name the event does not define: the event's own, else the machine's.
 * @param {MachineInterface} data @param {InterfaceEvent} event
 * @returns {string | undefined}
 */
export const unknownArgumentCode = (data, event) => event.extra_argument_error ?? data.extra_argument_error;

/**
 * The fields of a record (a scripted job, say) that a config key or an argument carries.
 * @param {MachineInterface} data @param {string} name
 * @returns {InterfaceParameter[]}
 */
export function recordFields(data, name) {
  const record = data.records?.[name];
  if (!record) throw new Error(`${data.machine}: no record ${name}`);
  return record.fields;
}

/**
 * `raw` over the defaults of a record's fields; a field without a default stays absent.
 * @param {MachineInterface} data @param {string} name @param {Record<string, unknown>} raw
 * @returns {Record<string, unknown>}
 */
export function withRecordDefaults(data, name, raw) {
  /** @type {Record<string, unknown>} */
  const merged = {};
  for (const field of recordFields(data, name)) if ("default" in field) merged[field.name] = copy(field.default);
  return { ...merged, ...raw };
}

/** @param {unknown} v @returns {v is Record<string, unknown>} */
const isPlainObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * Whether `value` is of JSON Schema type `type` (an integer is a number without a fraction,
 * never a boolean).
 * @param {string} type @param {unknown} value
 */
function hasJsonType(type, value) {
  switch (type) {
    case "integer": return typeof value === "number" && Number.isInteger(value);
    case "number": return typeof value === "number" && Number.isFinite(value);
    case "string": return typeof value === "string";
    case "boolean": return typeof value === "boolean";
    case "array": return Array.isArray(value);
    case "object": return isPlainObject(value);
    case "null": return value === null;
    default: throw new Error(`interface schema: unknown type ${type}`);
  }
}

/**
 * Whether `value` matches a type's schema fragment: the subset of JSON Schema the interface data
 * uses (type, enum, $vocabulary, minimum, maximum, minLength, minItems, maxItems, uniqueItems,
 * items, anyOf, propertyNames, additionalProperties). A keyword outside it throws, so that a
 * newer interface file fails loudly instead of being half read.
 * @param {MachineInterface} data @param {Record<string, unknown>} schema @param {unknown} value
 * @returns {boolean}
 */
function matchesSchema(data, schema, value) {
  for (const [keyword, rule] of Object.entries(schema)) {
    const ok = (() => {
      switch (keyword) {
        case "type": return hasJsonType(String(rule), value);
        case "enum": return /** @type {unknown[]} */ (rule).some((word) => JSON.stringify(word) === JSON.stringify(value));
        case "$vocabulary": return typeof value === "string" && vocabulary(data, String(rule)).includes(value);
        case "minimum": return typeof value !== "number" || value >= /** @type {number} */ (rule);
        case "maximum": return typeof value !== "number" || value <= /** @type {number} */ (rule);
        case "minLength": return typeof value !== "string" || [...value].length >= /** @type {number} */ (rule);
        case "minItems": return !Array.isArray(value) || value.length >= /** @type {number} */ (rule);
        case "maxItems": return !Array.isArray(value) || value.length <= /** @type {number} */ (rule);
        case "uniqueItems":
          return !rule || !Array.isArray(value) || new Set(value.map((item) => JSON.stringify(item))).size === value.length;
        case "items":
          return !Array.isArray(value) || value.every((item) => matchesSchema(data, /** @type {Record<string, unknown>} */ (rule), item));
        case "anyOf":
          return /** @type {Record<string, unknown>[]} */ (rule).some((branch) => matchesSchema(data, branch, value));
        case "propertyNames":
          return !isPlainObject(value) || Object.keys(value).every((name) => matchesSchema(data, /** @type {Record<string, unknown>} */ (rule), name));
        case "additionalProperties":
          return !isPlainObject(value) || Object.values(value).every((item) => matchesSchema(data, /** @type {Record<string, unknown>} */ (rule), item));
        default: throw new Error(`${data.machine}: interface schema keyword ${keyword} is not read by this port`);
      }
    })();
    if (!ok) return false;
  }
  return true;
}

/**
 * Whether `value` is of the interface's named type (its `types` entry). null is never checked
 * here: whether a parameter takes null is its `nullable`.
 * @param {MachineInterface} data @param {string} typeName @param {unknown} value
 * @returns {boolean}
 */
export function conforms(data, typeName, value) {
  const type = data.types?.[typeName];
  if (!type) throw new Error(`${data.machine}: no type ${typeName}`);
  return matchesSchema(data, type.schema, value);
}

/**
 * Throws when a typed constant of the port differs from the data, so that a port whose
 * declarations name a vocabulary literally still fails loudly on a stale word.
 * @param {string} what @param {unknown} constant @param {unknown} data
 */
export function agrees(what, constant, data) {
  if (JSON.stringify(constant) !== JSON.stringify(data)) {
    throw new Error(`${what} is ${JSON.stringify(constant)}, the interface data says ${JSON.stringify(data)}`);
  }
}
