export {
  contextRemainingTool,
  effectiveContextWindow,
  formatTokensLeft,
  tokensLeft,
  CONTEXT_REMAINING_DESCRIPTION,
} from './context-remaining-tool';
export type { ContextRemainingResult, ContextRemainingToolOptions, ContextStatusProvider } from './context-remaining-tool';

export { VERSION } from './version';
