/**
 * A first-in, first-out queue whose shift costs the same however long the
 * queue is (an array's shift moves every element after the first: a grep's
 * lookahead holds up to 16,384 entries). Taken slots are cleared, so the
 * queue holds nothing it gave out; the array is compacted once half of it is
 * taken.
 */
export class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head === this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head === this.items.length) {
      this.items.length = 0;
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}
