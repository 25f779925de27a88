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
export function loadInterface(machine: string): MachineInterface;
/**
 * A list vocabulary, such as the drop reasons.
 * @param {MachineInterface} data @param {string} name
 * @returns {readonly string[]}
 */
export function vocabulary(data: MachineInterface, name: string): readonly string[];
/**
 * A config key's default.
 * @param {MachineInterface} data @param {string} name
 * @returns {unknown}
 */
export function configDefault(data: MachineInterface, name: string): unknown;
/**
 * `config` over the defaults of its keys (a key given as null stays null).
 * @param {MachineInterface} data @param {Record<string, unknown>} config
 * @returns {Record<string, unknown>}
 */
export function withConfigDefaults(data: MachineInterface, config: Record<string, unknown>): Record<string, unknown>;
/**
 * `args` over the event's defaults; an argument without a default stays absent, and a null
 * that means absent (`null_is_absent`) takes the default.
 * @param {InterfaceEvent} event @param {Record<string, unknown>} args
 * @returns {Record<string, unknown>}
 */
export function withDefaults(event: InterfaceEvent, args: Record<string, unknown>): Record<string, unknown>;
/**
 * The fields of a record (a scripted job, say) that a config key or an argument carries.
 * @param {MachineInterface} data @param {string} name
 * @returns {InterfaceParameter[]}
 */
export function recordFields(data: MachineInterface, name: string): InterfaceParameter[];
/**
 * `raw` over the defaults of a record's fields; a field without a default stays absent.
 * @param {MachineInterface} data @param {string} name @param {Record<string, unknown>} raw
 * @returns {Record<string, unknown>}
 */
export function withRecordDefaults(data: MachineInterface, name: string, raw: Record<string, unknown>): Record<string, unknown>;
/**
 * Whether `value` is of the interface's named type (its `types` entry). null is never checked
 * here: whether a parameter takes null is its `nullable`.
 * @param {MachineInterface} data @param {string} typeName @param {unknown} value
 * @returns {boolean}
 */
export function conforms(data: MachineInterface, typeName: string, value: unknown): boolean;
/**
 * Throws when a typed constant of the port differs from the data, so that a port whose
 * declarations name a vocabulary literally still fails loudly on a stale word.
 * @param {string} what @param {unknown} constant @param {unknown} data
 */
export function agrees(what: string, constant: unknown, data: unknown): void;
export function eventOf(data: MachineInterface, name: string): InterfaceEvent | undefined;
export function optionNames(data: MachineInterface): readonly string[];
export function configKeys(data: MachineInterface): readonly string[];
export function unknownArguments(event: InterfaceEvent, args: Record<string, unknown>): string[];
export function unknownArgumentCode(data: MachineInterface, event: InterfaceEvent): string | undefined;
/**
 * A config key or an event argument.
 */
export type InterfaceParameter = {
    name: string;
    type: string;
    nullable?: boolean | undefined;
    /**
     * the value an absent one takes
     */
    default?: unknown;
    /**
     * absent is rejected with `code`
     */
    required?: boolean | undefined;
    when_absent?: string | undefined;
    /**
     * the error code of a bad value
     */
    code?: string | undefined;
    /**
     * null is taken as absent: the default applies
     */
    null_is_absent?: boolean | undefined;
    /**
     * the machine's parts it belongs to
     */
    part_of?: string[] | undefined;
    /**
     * a config key the runner adds, or checks before a session sees it
     */
    runner?: "supplies" | "checks" | undefined;
    /**
     * a config key of the scripted world, which the adapter reads itself
     */
    world?: boolean | undefined;
    /**
     * when given, no other argument may be
     */
    alone?: boolean | undefined;
    /**
     * a record field present exactly for these values
     */
    only_for?: {
        field: string;
        values: string[];
    } | undefined;
};
export type InterfaceEvent = {
    name: string;
    pure?: boolean | undefined;
    /**
     * a harness step that changes the world between events
     */
    harness?: boolean | undefined;
    /**
     * an event of the scripted world, which the adapter plays itself
     */
    world?: boolean | undefined;
    /**
     * this event's code for an unknown argument name
     */
    extra_argument_error?: string | undefined;
    arguments: InterfaceParameter[];
    outputs: string[];
    /**
     * the machine's parts it belongs to
     */
    part_of?: string[] | undefined;
};
/**
 * A named value type: its label for people, and a JSON Schema fragment in which
 * {"$vocabulary": NAME} stands for {"enum": vocabularies[NAME]}.
 */
export type InterfaceType = {
    label: string;
    schema: Record<string, unknown>;
};
export type MachineInterface = {
    machine: string;
    types?: Record<string, InterfaceType> | undefined;
    /**
     * the code of an argument name the event does not define
     */
    extra_argument_error?: string | undefined;
    config: {
        error: string;
        keys: InterfaceParameter[];
        options_vocabulary?: string;
    };
    events: InterfaceEvent[];
    records?: Record<string, {
        description?: string;
        fields: InterfaceParameter[];
    }> | undefined;
    vocabularies: Record<string, unknown>;
};
