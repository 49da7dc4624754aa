import { createCodeModeRuntime } from '@switchyard/code-mode-runtime';
import { createRemoteRuntime } from '@switchyard/code-mode-runtime/protocol';
import { CONFORMANCE_LIMITS, describeRuntimeConformance } from './conformance/runtime-conformance';
import { memoryPlacement } from './conformance/memory-transport';

// The placements of this machine: isolates in this process, in worker processes, and behind the
// runtime protocol over an in-memory link (plain, and with every frame delayed 0–15 ms).
describeRuntimeConformance('in-process', {
  createRuntime: () => createCodeModeRuntime({ isolation: 'in-process', ...CONFORMANCE_LIMITS }),
  containsCrashes: false,
});

describeRuntimeConformance('worker processes', {
  createRuntime: (overrides) => createCodeModeRuntime({ ...CONFORMANCE_LIMITS, ...overrides, workers: { shared: false, max: 4 } }),
  containsCrashes: true,
});

describeRuntimeConformance('runtime protocol over an in-memory link', {
  createRuntime: () => {
    const memory = memoryPlacement();
    return createRemoteRuntime({ placement: memory.placement, onShutdown: memory.close, ...CONFORMANCE_LIMITS });
  },
  containsCrashes: false,
});

describeRuntimeConformance('runtime protocol over an in-memory link delaying every frame 0–15 ms', {
  createRuntime: () => {
    const memory = memoryPlacement(() => ({ kind: 'delay', ms: Math.floor(Math.random() * 16) }));
    return createRemoteRuntime({ placement: memory.placement, onShutdown: memory.close, ...CONFORMANCE_LIMITS });
  },
  containsCrashes: false,
});
