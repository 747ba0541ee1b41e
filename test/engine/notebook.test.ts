// The notebook program (engine/notebook.ts): IPython syntax blanked with every position kept, code cells joined
// with a row map, and positions, ranges and edits carried between the program and the cells.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { blankMagics, cellAtLine, joinCells, toCellEdits, toCellPosition, toCellRange, toProgramPosition } from '../../server/src/engine/notebook';
import { computeLineStarts } from '../../server/src/engine/lines';
import { parsePython } from '../../server/src/engine/parser';

function blanked(source: string): string[] {
  const result = blankMagics(source);
  assert.equal(result.text.length, source.length, 'blanking keeps the length');
  assert.deepEqual(computeLineStarts(result.text), computeLineStarts(source), 'blanking keeps every line break');
  return result.text.split('\n');
}

test('line magics, shell, help and magic assignments become same-length statements; Python stays', () => {
  const source = [
    '%matplotlib inline',
    '!pip install -q timm',
    'files = !ls data',
    'out = %time model(x)',
    'model?',
    '??torch.nn.Linear',
    'x = 10 % 3',
    'y = (a',
    '     % b)',
    's = """',
    '!not a shell line inside a string',
    '"""',
    'if x:',
    '    !echo {x}',
    '%ls',
    'print("why?")  # a comment?',
    '!pip install \\',
    '    torch',
  ].join('\n');
  assert.deepEqual(blanked(source), [
    'pass              ',
    'pass                ',
    'pass            ',
    'pass                ',
    'pass  ',
    'pass             ',
    'x = 10 % 3',
    'y = (a',
    '     % b)',
    's = """',
    '!not a shell line inside a string',
    '"""',
    'if x:',
    '    pass     ',
    '0  ',
    'print("why?")  # a comment?',
    'pass          ',
    '         ',
  ]);
  assert.deepEqual(blankMagics(source).magicLines, [0, 1, 2, 3, 4, 5, 13, 14, 16, 17]);
});

test('a %% cell magic on the first non-blank line blanks the whole cell', async () => {
  const result = blankMagics('\n%%time\nfor x in y:\n    out = model(x)\r\nout 😀');
  assert.equal(result.cellMagic, true);
  assert.equal(result.text, '\n      \n           \n                  \r\n      ');
  // `%%` later in a cell is not a cell magic; the line is blanked like a line magic.
  assert.equal(blankMagics('x = 1\n%%time').cellMagic, false);
});

test('blanked cells parse without errors where IPython would run them', async () => {
  const program = joinCells([{ kind: 'code', text: 'for f in files:\n    !cp {f} out/\n%time train()\ndone = True' }]);
  const tree = await parsePython(program.text);
  assert.equal(tree!.rootNode.hasError, false);
  tree!.delete();
});

test('code cells are joined in order with a row per line; markdown and raw cells take no rows but count', () => {
  const program = joinCells([
    { kind: 'markdown', text: '# Title\n\ntext' },
    { kind: 'code', text: 'import torch\r\nx = 1\r\n' },
    { kind: 'raw', text: 'raw' },
    { kind: 'code', text: 'y = 2\r' },
    { kind: 'code', text: '' },
    { kind: 'code', text: 'z = "显存😀"; w = 3' },
  ]);
  assert.equal(program.text, 'import torch\r\nx = 1\r\n\ny = 2\n\n\nz = "显存😀"; w = 3');
  assert.deepEqual(program.cells.map((c) => [c.index, c.startLine, c.lineCount, c.startOffset, c.length, c.lastLineLength]), [
    [1, 0, 3, 0, 21, 0],
    [3, 3, 2, 22, 6, 0],
    [4, 5, 1, 29, 0, 0],
    [5, 6, 1, 30, 17, 17],
  ]);
  const lines = computeLineStarts(program.text);
  assert.equal(lines.length, 7, 'the rows of the cells add up: a trailing lone \\r cannot merge with the separator');
  for (const cell of program.cells) assert.equal(lines[cell.startLine], cell.startOffset);
  assert.equal(cellAtLine(program.cells, 2)!.index, 1);
  assert.equal(cellAtLine(program.cells, 4)!.index, 3);
  assert.equal(cellAtLine(program.cells, 9), undefined);
  // UTF-16 columns pass through unchanged.
  const w = program.text.indexOf('w = 3') - lines[6]!;
  assert.deepEqual(toCellPosition(program.cells, { line: 6, character: w }), { cell: program.cells[3], position: { line: 0, character: 'z = "显存😀"; '.length } });
  assert.deepEqual(toProgramPosition(program.cells[1]!, { line: 1, character: 2 }), { line: 4, character: 2 });
});

test('ranges and edits map into cells; a deleted last line ends at its cell, a range across cells does not map', () => {
  const program = joinCells([
    { kind: 'code', text: 'a = 1\nb = 2' },
    { kind: 'code', text: '%%bash\necho hi' },
    { kind: 'code', text: 'c = 3' },
  ]);
  const [first, magic, last] = program.cells;
  assert.deepEqual(toCellRange(program.cells, { start: { line: 1, character: 0 }, end: { line: 2, character: 0 } }), {
    cell: first, range: { start: { line: 1, character: 0 }, end: { line: 1, character: 5 } },
  });
  assert.equal(toCellRange(program.cells, { start: { line: 1, character: 0 }, end: { line: 2, character: 3 } }), undefined);
  const edits = toCellEdits(program.cells, [
    { range: { start: { line: 4, character: 5 }, end: { line: 4, character: 5 } }, newText: ';' },
    { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, newText: 'import torch\n' },
  ]);
  assert.deepEqual(edits?.map((group) => [group.cell.index, group.edits]), [
    [0, [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, newText: 'import torch\n' }]],
    [2, [{ range: { start: { line: 0, character: 5 }, end: { line: 0, character: 5 } }, newText: ';' }]],
  ]);
  assert.equal(last!.startLine, 4);
  // No fix edits a cell that a %% magic makes non-Python.
  assert.equal(toCellEdits(program.cells, [{ range: { start: { line: magic!.startLine, character: 0 }, end: { line: magic!.startLine, character: 0 } }, newText: 'x\n' }]), undefined);
});
