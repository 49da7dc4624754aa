export { contextRemainingTool } from './context-remaining-tool';
export type { ContextRemainingResult, ContextRemainingToolOptions, ContextStatusProvider } from './context-remaining-tool';

export { VERSION } from './version';
