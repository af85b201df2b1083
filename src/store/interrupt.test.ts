import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { interruptSignals } from './interrupt.js';

describe('interruptSignals', () => {
  it('first signal stops gracefully, second cancels, dispose removes the handlers', () => {
    const emitter = new EventEmitter();
    const seen: string[] = [];
    const signals = interruptSignals(emitter, (name, level) => seen.push(`${name}:${level}`));
    expect(signals.signal.aborted).toBe(false);
    emitter.emit('SIGTERM');
    expect(signals.signal.aborted).toBe(true);
    expect(signals.hardSignal.aborted).toBe(false);
    emitter.emit('SIGINT');
    expect(signals.hardSignal.aborted).toBe(true);
    emitter.emit('SIGINT');
    expect(seen).toEqual(['SIGTERM:graceful', 'SIGINT:hard']);
    signals.dispose();
    expect(emitter.listenerCount('SIGINT') + emitter.listenerCount('SIGTERM')).toBe(0);
  });
});
