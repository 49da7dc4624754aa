/** The module name every cell is compiled under (stack traces show it). */
export const CELL_FILENAME = 'exec_main.mjs';
