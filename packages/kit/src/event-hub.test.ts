import { describe, expect, it } from 'vitest';
import { createEventHub, type ListenerErrorReport } from './event-hub';

type Event = { type: 'a'; n: number } | { type: 'b'; s: string };

describe('createEventHub', () => {
  it('delivers to type listeners then any-listeners, in subscription order; unsubscribe stops delivery', () => {
    const hub = createEventHub<Event>({ name: 'test' });
    const seen: string[] = [];
    hub.onAny((event) => seen.push(`any ${event.type}`));
    const offA = hub.on('a', (event) => seen.push(`a1 ${event.n}`));
    hub.on('a', (event) => seen.push(`a2 ${event.n}`));
    hub.on('b', (event) => seen.push(`b ${event.s}`));
    hub.emit({ type: 'a', n: 1 });
    hub.emit({ type: 'b', s: 'x' });
    offA();
    hub.emit({ type: 'a', n: 2 });
    expect(seen).toEqual(['a1 1', 'a2 1', 'any a', 'b x', 'any b', 'a2 2', 'any a']);
    expect(hub.listenerCount('a')).toBe(2);
  });

  it('a throwing listener reaches neither the emitter nor the listeners after it, and is reported with its hub and type', () => {
    const reports: ListenerErrorReport[] = [];
    const hub = createEventHub<Event>({ name: 'test', onListenerError: (report) => reports.push(report) });
    const seen: number[] = [];
    const boom = new Error('boom');
    hub.on('a', () => {
      throw boom;
    });
    hub.on('a', (event) => seen.push(event.n));
    expect(() => hub.emit({ type: 'a', n: 7 })).not.toThrow();
    expect(seen).toEqual([7]);
    expect(reports).toEqual([{ hub: 'test', type: 'a', error: boom }]);
  });

  it('by default reports through process.emitWarning (SwitchyardWarning, SWITCHYARD_LISTENER), each distinct message once', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const hub = createEventHub<Event>({ name: 'default-channel' });
      hub.on('b', (event) => {
        throw new Error(`bad ${event.s}`);
      });
      hub.emit({ type: 'b', s: 'one' });
      hub.emit({ type: 'b', s: 'one' });
      hub.emit({ type: 'b', s: 'two' });
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.map((warning) => [warning.name, (warning as { code?: string }).code, warning.message])).toEqual([
      ['SwitchyardWarning', 'SWITCHYARD_LISTENER', 'a default-channel listener for "b" threw: bad one'],
      ['SwitchyardWarning', 'SWITCHYARD_LISTENER', 'a default-channel listener for "b" threw: bad two'],
    ]);
  });

  it('a listener that unsubscribes another during delivery does not skip or crash the current emit', () => {
    const hub = createEventHub<Event>({ name: 'test' });
    const seen: string[] = [];
    let offSecond = () => {};
    hub.on('a', () => {
      seen.push('first');
      offSecond();
    });
    offSecond = hub.on('a', () => seen.push('second'));
    hub.emit({ type: 'a', n: 1 });
    hub.emit({ type: 'a', n: 2 });
    expect(seen).toEqual(['first', 'second', 'first']);
  });

  it('a throwing report channel is contained too', () => {
    const hub = createEventHub<Event>({
      name: 'test',
      onListenerError: () => {
        throw new Error('channel broke');
      },
    });
    hub.on('a', () => {
      throw new Error('listener broke');
    });
    expect(() => hub.emit({ type: 'a', n: 1 })).not.toThrow();
  });
});
