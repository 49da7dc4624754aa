import { toWireTools, type HostedToolSpec, type ToolExecutor, type ToolSpec } from '@switchyard/protocol';
import type { ResolvedToolBudget } from './tool-budget';

// The model's list of one plan, and whether a list passes the budget.

/**
 * The model's list before namespace merging: visible executors in registry order (namespaced
 * function and freeform tools wrapped in a namespace spec), except `hidden` ones, then `search`, then hosted specs.
 */
export function modelList(
  executors: readonly ToolExecutor[],
  shown: ReadonlyMap<ToolExecutor, ToolSpec>,
  hidden: ReadonlySet<ToolExecutor>,
  search: ToolExecutor | undefined,
  hostedSpecs: readonly HostedToolSpec[],
): ToolSpec[] {
  const specs: ToolSpec[] = [];
  for (const executor of executors) {
    const spec = shown.get(executor);
    if (spec === undefined || hidden.has(executor)) continue;
    const namespace = executor.name.namespace;
    if (namespace && (spec.type === 'function' || spec.type === 'custom')) {
      specs.push({ type: 'namespace', name: namespace, description: executor.namespaceDescription ?? '', tools: [spec] });
    } else {
      specs.push(spec);
    }
  }
  if (search) specs.push(search.spec);
  specs.push(...hostedSpecs);
  return specs;
}

/**
 * `false` when the specs fit the budget, else a token count they are known to pass. Counts spec by
 * spec (namespace members one by one) and stops once the running sum is over the budget by more
 * than the seams between parts could account for, so a huge list costs about one budget of work.
 */
export function exceedsBudget(specs: readonly ToolSpec[], budget: ResolvedToolBudget): number | false {
  let sum = 0;
  let seams = 0;
  const over = () => sum > budget.tokens + 3 * seams;
  for (const spec of specs) {
    if (spec.type === 'namespace') {
      sum += budget.countTokens(JSON.stringify(toWireTools([{ ...spec, tools: [] }])));
      for (const member of spec.tools) {
        sum += budget.countTokens(JSON.stringify(toWireTools([member])));
        seams++;
        if (over()) return sum - 3 * seams;
      }
    } else {
      sum += budget.countTokens(JSON.stringify(toWireTools([spec])));
    }
    seams++;
    if (over()) return sum - 3 * seams;
  }
  const whole = budget.countTokens(JSON.stringify(toWireTools(specs)));
  return whole > budget.tokens ? whole : false;
}
