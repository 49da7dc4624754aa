import type { ElicitRequestParams } from '@modelcontextprotocol/client';

/**
 * What a server may ask the host for, before the host hears of it. An elicitation asks the user
 * for input a running call needs: none while no call of the server is in flight, no more waiting
 * for the user than calls in flight (each call waits on the user once at a time), and a URL
 * elicitation only to an `https:` URL (the host sends its user there: `javascript:`, `file:`,
 * `data:` and plain `http:` are refused). A refused one is declined (the server's tool can go on).
 */
export interface ElicitationGate {
  /** Admits one elicitation: `done` once it is answered, or why it is declined. */
  admit(params: ElicitRequestParams): { done(): void } | { refused: string };
}

/** Why `params` is refused given the calls in flight and the elicitations already waiting; `undefined` when admitted. */
function refusal(params: ElicitRequestParams, callsInFlight: number, waiting: number): string | undefined {
  if (callsInFlight === 0) return 'an elicitation while no call of the server was in flight';
  if (params.mode === 'url') {
    let protocol: string | undefined;
    try {
      protocol = new URL((params as { url: string }).url).protocol;
    } catch {
      protocol = undefined;
    }
    if (protocol !== 'https:') return `a URL elicitation to a ${protocol ?? 'malformed'} URL (https: only)`;
  }
  if (waiting >= callsInFlight) return `more elicitations waiting for the user than calls in flight (${callsInFlight})`;
  return undefined;
}

/** One server's gate: `callsInFlight` counts its calls running; `onRefused` hears each way of refusing once. */
export function createElicitationGate(callsInFlight: () => number, onRefused: (message: string) => void): ElicitationGate {
  let waiting = 0;
  const reported = new Set<string>();
  return {
    admit(params) {
      const refused = refusal(params, callsInFlight(), waiting);
      if (refused !== undefined) {
        // a flood is one warning per way it was refused
        if (!reported.has(refused)) onRefused(`declined ${refused}`);
        reported.add(refused);
        return { refused };
      }
      waiting++;
      let open = true;
      return {
        done() {
          if (open) waiting--;
          open = false;
        },
      };
    },
  };
}
