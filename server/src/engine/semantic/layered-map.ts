// A map made from the previous version's by the few names an edit changed, without copying it. A 20,000-line script's
// model carried three maps of 700 to 1,100 names from version to version, copied whole on every keystroke (most of the
// model's allocation per edit, and so most of the young collections while typing). A layer reads its base where it has
// not set or deleted a name itself; past a few layers a new one is made flat (one copy every few versions).

/** Past this many layers a new map copies its base's entries instead of reading through them. */
const MAX_LAYERS = 8;

export class LayeredMap<K, V> implements Map<K, V> {
  private readonly own = new Map<K, V>();
  /** Names of the base this layer deleted. */
  private readonly hidden = new Set<K>();
  private readonly base: LayeredMap<K, V> | ReadonlyMap<K, V> | undefined;
  private readonly layers: number;

  /** A map with the entries of `base`, which must not change afterwards (it is read, not copied). */
  constructor(base?: ReadonlyMap<K, V>) {
    const baseLayers = base instanceof LayeredMap ? base.layers : 1;
    if (base && baseLayers < MAX_LAYERS) {
      this.base = base;
      this.layers = baseLayers + 1;
    } else {
      if (base instanceof LayeredMap) base.copyInto(this.own);
      else base?.forEach((value, key) => this.own.set(key, value));
      this.base = undefined;
      this.layers = 1;
    }
  }

  /** Writes this map's entries into `target`: the base's first, then this layer's changes (one pass per layer). */
  private copyInto(target: Map<K, V>): void {
    if (this.base instanceof LayeredMap) this.base.copyInto(target);
    else this.base?.forEach((value, key) => target.set(key, value));
    for (const key of this.hidden) target.delete(key);
    this.own.forEach((value, key) => target.set(key, value));
  }

  get(key: K): V | undefined {
    const value = this.own.get(key);
    if (value !== undefined || this.own.has(key)) return value;
    return this.base && !this.hidden.has(key) ? this.base.get(key) : undefined;
  }

  has(key: K): boolean {
    return this.own.has(key) || (!!this.base && !this.hidden.has(key) && this.base.has(key));
  }

  set(key: K, value: V): this {
    this.own.set(key, value);
    this.hidden.delete(key);
    return this;
  }

  delete(key: K): boolean {
    const had = this.has(key);
    this.own.delete(key);
    if (this.base?.has(key)) this.hidden.add(key);
    return had;
  }

  clear(): void {
    this.own.clear();
    if (this.base) this.base.forEach((_, key) => this.hidden.add(key));
  }

  get size(): number {
    let size = 0;
    this.forEach(() => size++);
    return size;
  }

  /** The base's entries in its order (with this layer's values for the names it set again), then the names only this layer has. */
  forEach(callback: (value: V, key: K, map: Map<K, V>) => void, thisArg?: unknown): void {
    this.base?.forEach((value, key) => {
      if (this.hidden.has(key)) return;
      callback.call(thisArg, this.own.has(key) ? this.own.get(key)! : value, key, this);
    });
    this.own.forEach((value, key) => {
      if (!this.base?.has(key) || this.hidden.has(key)) callback.call(thisArg, value, key, this);
    });
  }

  *entries(): MapIterator<[K, V]> {
    const entries: Array<[K, V]> = [];
    this.forEach((value, key) => entries.push([key, value]));
    yield* entries;
  }

  *keys(): MapIterator<K> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): MapIterator<V> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries();
  }

  get [Symbol.toStringTag](): string {
    return 'LayeredMap';
  }
}
