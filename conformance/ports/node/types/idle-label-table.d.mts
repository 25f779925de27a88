export const UNICODE_VERSION: "15.1.0";
/** @type {readonly (readonly [low: number, high: number])[]} */
export const SPACE_RANGES: readonly (readonly [low: number, high: number])[];
/** @type {readonly (readonly [low: number, high: number])[]} */
export const BLANK_RANGES: readonly (readonly [low: number, high: number])[];
/** @type {readonly string[]} */
export const FOLDED_PHRASES: readonly string[];
/** @type {readonly (readonly [low: number, high: number])[]} */
export const LOOKALIKE_RANGES: readonly (readonly [low: number, high: number])[];
/** @type {readonly (readonly [codePoint: number, letter: string])[]} */
export const LETTER_FOLDS: readonly (readonly [codePoint: number, letter: string])[];
