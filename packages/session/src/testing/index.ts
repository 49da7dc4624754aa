/**
 * @switchyard/session/testing — test doubles for hosts and tools: `createScriptedModel` answers
 * each model request with the next scripted response (a stand-in for a real model in tests, demos
 * and examples). No test runner is imported here; it is plain runtime code.
 */
export { createScriptedModel } from './scripted-model';
export type { ScriptedModel, ScriptedModelOptions, ScriptedResponse } from './scripted-model';
export { SESSION_STORE_CHECKS } from './store-checks';
export type { SessionStoreCheck } from './store-checks';
