#!/usr/bin/env node
export type Step = import("./protocol.mjs").Step;
/**
 * What adapter.mjs needs of a machine module.
 */
export type MachinePort = {
    FEATURES: readonly string[];
    runCase: (config: Record<string, unknown>, steps: Step[]) => object;
};
export type Reply = Record<string, unknown>;
