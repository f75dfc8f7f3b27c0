// Bundled in place of `mnemonist/lru-cache` (esbuild alias, ./bundling.ts), in Lambda bundles only.
// The DynamoDB client creates an endpoint-discovery cache (@aws-sdk/endpoint-cache) whether or not
// discovery is on (it is off: no operation we call requires it), and mnemonist's LRU cache brings its
// typed-array and iterator helpers (about 7 KB in every function that reads the table). This is the
// same cache on a Map, with the methods EndpointCache calls: get (marks the key used), peek, has, set
// (evicts the least recently used key past the capacity), clear.
export default class LRUCache<K, V> {
  private readonly items = new Map<K, V>();

  constructor(private readonly capacity: number) {}

  get size(): number {
    return this.items.size;
  }

  has(key: K): boolean {
    return this.items.has(key);
  }

  peek(key: K): V | undefined {
    return this.items.get(key);
  }

  get(key: K): V | undefined {
    if (!this.items.has(key)) return undefined;
    const value = this.items.get(key) as V;
    this.items.delete(key);
    this.items.set(key, value);
    return value;
  }

  set(key: K, value: V): this {
    this.items.delete(key);
    this.items.set(key, value);
    if (this.items.size > this.capacity) this.items.delete(this.items.keys().next().value as K);
    return this;
  }

  clear(): void {
    this.items.clear();
  }
}
