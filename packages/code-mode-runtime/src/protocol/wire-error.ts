import { CellError, SwitchyardError, cellIdOf, errorMessage, isSwitchyardError } from '@switchyard/protocol';

import type { WireError } from './messages';

/** The cell error of the cell contract (`@switchyard/protocol`), re-exported where the wire errors are made. */
export { CellError, cellIdOf };

/**
 * `error` naming cell `cellId`: a {@link CellError} with the same code and message (the original
 * is its `cause`); an error that already names that cell is returned as it is. A value that is not
 * a `SwitchyardError` becomes an `INTERNAL` one.
 */
export function cellError(error: unknown, cellId: string): CellError {
  if (error instanceof CellError && error.cellId === cellId) return error;
  const base = isSwitchyardError(error) ? error : new SwitchyardError('INTERNAL', errorMessage(error), { cause: error });
  return new CellError(base.code, base.message, cellId, { cause: base });
}

/** The error as it travels in a `reply`: its code (`INTERNAL` for what is not a `SwitchyardError`), its message and its cell. */
export function toWireError(error: unknown): WireError {
  const wire: WireError = isSwitchyardError(error) ? { code: error.code, message: error.message } : { code: 'INTERNAL', message: errorMessage(error) };
  const cellId = cellIdOf(error);
  if (cellId !== undefined) wire.cellId = cellId;
  return wire;
}

/** The error a `reply` carried, as the host rejects with it: a `SwitchyardError`, a {@link CellError} when it names a cell. */
export function fromWireError(wire: WireError): SwitchyardError {
  return wire.cellId === undefined ? new SwitchyardError(wire.code, wire.message) : new CellError(wire.code, wire.message, wire.cellId);
}
