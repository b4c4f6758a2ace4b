import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FileTableBuilder, fileView, tableOf } from '../../../src/system/dataset/file-table.js';

const file = (name: string, bytes = name.length) => ({ name, bytes, foreign: false });

describe('FileTable', () => {
  it('sorts directories by prefix and names within each, and merges a directory met twice', () => {
    const builder = new FileTableBuilder();
    builder.addDirectory('data/b/', [file('2.jpg'), file('1.jpg')]);
    builder.addDirectory('data/', [file('z.txt'), file('é.bin', 7)]);
    builder.addDirectory('data/a.b/', [file('x')]);
    builder.addDirectory('data/b/', [file('1.jpg'), file('3.jpg')]);
    const table = builder.build();
    const view = fileView(table);
    assert.deepEqual(
      view.map((f) => f.path),
      ['data/z.txt', 'data/é.bin', 'data/a.b/x', 'data/b/1.jpg', 'data/b/2.jpg', 'data/b/3.jpg'],
    );
    assert.equal(table.totalBytes(), 5 + 7 + 1 + 5 + 5 + 5);
    assert.equal(table.dirOf(4), 2);
    assert.equal(table.dirOf(0), 0);
    assert.deepEqual([...table.nameBytes(1)], [...Buffer.from('é.bin\0')]);
  });

  it('behaves as a read-only array of { path, bytes }', () => {
    const builder = new FileTableBuilder();
    builder.addDirectory('/d/', [file('a', 1), file('b', 2), file('c', 3)]);
    const view = fileView(builder.build());
    assert.ok(Array.isArray(view));
    assert.equal(view.length, 3);
    assert.deepEqual(view[1], { path: '/d/b', bytes: 2 });
    assert.equal(view[3], undefined);
    assert.deepEqual(
      [...view].map((f) => f.bytes),
      [1, 2, 3],
    );
    assert.deepEqual(
      view.filter((f) => f.bytes > 1).map((f) => f.path),
      ['/d/b', '/d/c'],
    );
    assert.deepEqual(view.slice(1), [
      { path: '/d/b', bytes: 2 },
      { path: '/d/c', bytes: 3 },
    ]);
    assert.equal(
      view.reduce((sum, f) => sum + f.bytes, 0),
      6,
    );
    assert.deepEqual(view, [
      { path: '/d/a', bytes: 1 },
      { path: '/d/b', bytes: 2 },
      { path: '/d/c', bytes: 3 },
    ]);
    assert.ok(tableOf(view));
    assert.equal(tableOf([]), undefined);
    assert.throws(() => ((view as { path: string }[])[0] = { path: 'x' }), TypeError);
    assert.throws(() => (view as unknown[]).push(1), TypeError);
  });

  it('lists exactly what was added, in path order within directories (property)', () => {
    const name = fc.stringMatching(/^[a-z0-9._é-]{1,12}$/);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('', 'r/', 'r/s/', 'r/s.t/'), fc.uniqueArray(name, { maxLength: 30 }))),
        (dirs) => {
          const builder = new FileTableBuilder();
          const expected = new Map<string, number>();
          dirs.forEach(([prefix, names], d) => {
            builder.addDirectory(
              prefix,
              names.map((n, i) => file(n, d * 100 + i)),
            );
            names.forEach((n, i) => expected.set(prefix + n, d * 100 + i));
          });
          const table = builder.build();
          const view = fileView(table);
          const listed = view.map((f) => [f.path, f.bytes] as const);
          // A keeper's lookup by the directory and the name's bytes finds the same file (é takes the string path).
          listed.forEach(([p], i) =>
            assert.equal(
              table.indexOfName(table.dirOf(i), Buffer.from(p.slice(p.lastIndexOf('/') + 1))),
              i,
              `indexOfName ${p}`,
            ),
          );
          for (let dir = 0; dir < table.prefixes.length; dir++)
            assert.equal(table.indexOfName(dir, Buffer.from('~nope')), -1);
          assert.deepEqual(new Map(listed), expected);
          assert.equal(listed.length, expected.size);
          for (let i = 1; i < listed.length; i++) {
            const [a, b] = [listed[i - 1][0], listed[i][0]];
            const dirA = a.slice(0, a.lastIndexOf('/') + 1);
            const dirB = b.slice(0, b.lastIndexOf('/') + 1);
            assert.ok(dirA < dirB || (dirA === dirB && a < b), `${a} before ${b}`);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
