// A dataset's file list, stored compactly: a prefix per directory, the names in one NUL-separated buffer, sizes in a
// Float64Array: a file costs its name plus 13 bytes, against ~150 for an object. fileView() builds { path, bytes } on
// access; tableOf() finds the table behind a view.

/** One file of a table, as the view hands it out. */
export interface TableFile {
  /** Prefix + name: the path as reached from the root. */
  path: string;
  /** Size in bytes at the walk. */
  bytes: number;
}

/** The compact list; build it with FileTableBuilder. */
export class FileTable {
  /** Files in the table. */
  readonly length: number;

  constructor(
    /** Each directory's prefix: its path and a '/' ('' for the current directory), sorted. */
    readonly prefixes: readonly string[],
    /** First file of each directory; prefixes.length + 1 entries, the last is length. */
    readonly dirStart: Uint32Array,
    /** Names, UTF-8, each followed by a NUL (ready for openat). */
    readonly names: Buffer,
    /** Byte offset of each name in `names`; length + 1 entries. */
    readonly nameStart: Uint32Array,
    /** Size of each file, bytes. */
    readonly sizes: Float64Array,
    /** 1 where the file's owner is not this user (mincore may not be trusted for it). */
    readonly foreign: Uint8Array,
  ) {
    this.length = sizes.length;
  }

  /** Index of the directory holding file `index` (binary search over dirStart). */
  dirOf(index: number): number {
    let lo = 0;
    let hi = this.prefixes.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.dirStart[mid] <= index) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** The name of file `index`. */
  name(index: number): string {
    return this.names.toString('utf8', this.nameStart[index], this.nameStart[index + 1] - 1);
  }

  /** The name of file `index` as NUL-terminated bytes (a view, not a copy). */
  nameBytes(index: number): Uint8Array {
    return this.names.subarray(this.nameStart[index], this.nameStart[index + 1]);
  }

  /** The path of file `index`. */
  path(index: number, dir = this.dirOf(index)): string {
    return this.prefixes[dir] + this.name(index);
  }

  /** The index of `name` in directory `dir`, or -1. */
  indexIn(dir: number, name: string): number {
    let lo = this.dirStart[dir];
    let hi = this.dirStart[dir + 1] - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const at = this.name(mid);
      if (at === name) return mid;
      if (at < name) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** The index of the file named by the UTF-8 bytes `name` in `dir`, or -1 (compared as bytes where ASCII). */
  indexOfName(dir: number, name: Uint8Array): number {
    for (let k = 0; k < name.length; k++)
      if (name[k] >= 0x80)
        return this.indexIn(dir, Buffer.from(name.buffer, name.byteOffset, name.length).toString('utf8'));
    let lo = this.dirStart[dir];
    let hi = this.dirStart[dir + 1] - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const order = compareBytes(this.names, this.nameStart[mid], this.nameStart[mid + 1] - 1, name);
      if (order === 0) return mid;
      if (order < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** Total bytes of the files whose size is known (a table built from a plain list holds -1 for the others). */
  totalBytes(): number {
    let sum = 0;
    for (let i = 0; i < this.sizes.length; i++) sum += Math.max(0, this.sizes[i]);
    return sum;
  }
}

/** bytes[start, end) against `other`, as a sort order (a loop: Buffer.compare's checks cost ~250 ns a call). */
function compareBytes(bytes: Uint8Array, start: number, end: number, other: Uint8Array): number {
  const length = Math.min(end - start, other.length);
  for (let k = 0; k < length; k++) {
    const diff = bytes[start + k] - other[k];
    if (diff !== 0) return diff;
  }
  return end - start - other.length;
}

/** Accumulates directories of files, then sorts them into a FileTable. */
export class FileTableBuilder {
  private groups: { prefix: string; first: number; count: number }[] = [];
  private names = Buffer.allocUnsafe(1 << 16);
  private nameBytes = 0;
  private nameStart = new Uint32Array(1024);
  private sizes = new Float64Array(1024);
  private foreign = new Uint8Array(1024);
  private count = 0;
  /** Files added so far with at least one byte. */
  nonEmptyFiles = 0;

  /** Files added so far. */
  get length(): number {
    return this.count;
  }

  /** Adds one directory's files (any order; sorted here). Names must not contain '/' or NUL. */
  addDirectory(prefix: string, files: { name: string; bytes: number; foreign: boolean }[]): void {
    if (files.length === 0) return;
    files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.groups.push({ prefix, first: this.count, count: files.length });
    for (const file of files) this.push(file.name, file.bytes, file.foreign);
  }

  /** The table: directories sorted by prefix, a directory met twice merged, a name met twice kept once. */
  build(): FileTable {
    const groups = this.groups;
    const sorted = groups.every((group, i) => i === 0 || groups[i - 1].prefix < group.prefix);
    // Added in prefix order (the walk's): the table is views of the builder's arrays, not a second copy.
    const from = sorted ? this : this.reordered();
    const n = from.count;
    const dirStart = new Uint32Array(from.groups.length + 1);
    for (const [i, group] of from.groups.entries()) dirStart[i] = group.first;
    dirStart[from.groups.length] = n;
    return new FileTable(
      from.groups.map((group) => group.prefix),
      dirStart,
      from.names.subarray(0, from.nameBytes),
      from.nameStart.subarray(0, n + 1),
      from.sizes.subarray(0, n),
      from.foreign.subarray(0, n),
    );
  }

  // A copy with the directories in prefix order, a directory met twice merged.
  private reordered(): FileTableBuilder {
    const order = [...this.groups].sort((a, b) => (a.prefix < b.prefix ? -1 : a.prefix > b.prefix ? 1 : 0));
    const out = new FileTableBuilder();
    for (let g = 0; g < order.length; g++) {
      let end = g;
      while (end + 1 < order.length && order[end + 1].prefix === order[g].prefix) end++;
      if (end === g) out.copyGroup(this, order[g]);
      else {
        // Rare (file roots): merge by name through strings.
        const byName = new Map<string, { name: string; bytes: number; foreign: boolean }>();
        for (let k = g; k <= end; k++) {
          for (let i = order[k].first; i < order[k].first + order[k].count; i++) {
            const name = this.names.toString('utf8', this.nameStart[i], this.nameStart[i + 1] - 1);
            byName.set(name, { name, bytes: this.sizes[i], foreign: this.foreign[i] === 1 });
          }
        }
        out.addDirectory(order[g].prefix, [...byName.values()]);
      }
      g = end;
    }
    return out;
  }

  private copyGroup(from: FileTableBuilder, group: { prefix: string; first: number; count: number }): void {
    this.groups.push({ prefix: group.prefix, first: this.count, count: group.count });
    for (let i = group.first; i < group.first + group.count; i++) {
      this.pushBytes(
        from.names.subarray(from.nameStart[i], from.nameStart[i + 1]),
        from.sizes[i],
        from.foreign[i] === 1,
      );
    }
  }

  private push(name: string, bytes: number, foreign: boolean): void {
    const length = Buffer.byteLength(name);
    this.reserve(length + 1);
    this.names.write(name, this.nameBytes, 'utf8');
    this.names[this.nameBytes + length] = 0;
    this.record(length + 1, bytes, foreign);
  }

  private pushBytes(nameWithNul: Uint8Array, bytes: number, foreign: boolean): void {
    this.reserve(nameWithNul.length);
    this.names.set(nameWithNul, this.nameBytes);
    this.record(nameWithNul.length, bytes, foreign);
  }

  private reserve(bytes: number): void {
    if (this.nameBytes + bytes > this.names.length) {
      const grown = Buffer.allocUnsafe(Math.max(Math.ceil(this.names.length * 1.5), this.nameBytes + bytes));
      this.names.copy(grown, 0, 0, this.nameBytes);
      this.names = grown;
    }
    if (this.count + 2 > this.sizes.length) {
      const size = Math.ceil(this.sizes.length * 1.5);
      this.nameStart = grow(this.nameStart, new Uint32Array(size));
      this.sizes = grow(this.sizes, new Float64Array(size));
      this.foreign = grow(this.foreign, new Uint8Array(size));
    }
  }

  private record(nameBytes: number, bytes: number, foreign: boolean): void {
    this.nameStart[this.count] = this.nameBytes;
    this.sizes[this.count] = bytes;
    this.foreign[this.count] = foreign ? 1 : 0;
    if (bytes > 0) this.nonEmptyFiles++;
    this.nameBytes += nameBytes;
    this.count++;
    this.nameStart[this.count] = this.nameBytes;
  }
}

function grow<T extends Uint32Array | Float64Array | Uint8Array>(from: T, to: T): T {
  to.set(from as never);
  return to;
}

const tables = new WeakMap<object, FileTable>();

/** The table behind a view made by fileView(), if `files` is one. */
export function tableOf(files: object): FileTable | undefined {
  return tables.get(files);
}

/** An array-like, read-only view of the table, each element built on access (Array.isArray is true; writes throw). */
export function fileView(table: FileTable): readonly TableFile[] {
  const at = (index: number): TableFile => ({ path: table.path(index), bytes: table.sizes[index] });
  const indexOf = (key: string | symbol): number => {
    if (typeof key !== 'string') return -1;
    const index = Number(key);
    return Number.isInteger(index) && index >= 0 && index < table.length && String(index) === key ? index : -1;
  };
  function* iterate(): IterableIterator<TableFile> {
    for (let dir = 0; dir < table.prefixes.length; dir++) {
      const prefix = table.prefixes[dir];
      for (let i = table.dirStart[dir]; i < table.dirStart[dir + 1]; i++)
        yield { path: prefix + table.name(i), bytes: table.sizes[i] };
    }
  }
  const readOnly = (): never => {
    throw new TypeError('the dataset file list is read-only');
  };
  const view = new Proxy<TableFile[]>([], {
    get(target, key, receiver) {
      if (key === 'length') return table.length;
      if (key === Symbol.iterator) return iterate;
      const index = indexOf(key);
      if (index >= 0) return at(index);
      return Reflect.get(target, key, receiver);
    },
    has(target, key) {
      return indexOf(key) >= 0 || Reflect.has(target, key);
    },
    ownKeys() {
      return [...Array.from({ length: table.length }, (_, i) => String(i)), 'length'];
    },
    getOwnPropertyDescriptor(target, key) {
      if (key === 'length') return { value: table.length, writable: true, enumerable: false, configurable: false };
      const index = indexOf(key);
      if (index >= 0) return { value: at(index), writable: false, enumerable: true, configurable: true };
      return Reflect.getOwnPropertyDescriptor(target, key);
    },
    set: readOnly,
    defineProperty: readOnly,
    deleteProperty: readOnly,
  });
  tables.set(view, table);
  return view;
}
