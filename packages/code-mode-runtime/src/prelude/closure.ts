/**
 * The entry `build-prelude.ts` bundles: the body of the closure `cell.ts` evaluates with
 * `context.evalClosure(CELL_PRELUDE, [post, configJson, storedPairs, flow])`. The closure's
 * parameters arrive as `$0`…`$3`; the bundle assigns the control function to
 * `__switchyard_control`, which the closure declares before and returns after it.
 */
import type { FlowFunction, PostFunction, PreludeConfig, StoredPair, ControlFunction } from './bridge';
import { installPrelude } from './install-prelude';

declare const $0: PostFunction;
declare const $1: string;
declare const $2: readonly StoredPair[];
declare const $3: FlowFunction;
declare let __switchyard_control: ControlFunction;

__switchyard_control = installPrelude($0, JSON.parse($1) as PreludeConfig, $2, $3);
