/** Keyboard navigation: j/k move between edits, a/r accept or reject, and a few more (dialogs.ts lists them). */
export interface KeyActions {
  next(): void;
  prev(): void;
  accept(): void;
  reject(): void;
  acceptConversation(): void;
  rejectConversation(): void;
  toggle(): void;
  focusFilter(): void;
  status(index: number): void;
  theme(): void;
  help(): void;
}

export function bindKeys(a: KeyActions): void {
  document.addEventListener("keydown", (ev) => {
    if (ev.ctrlKey || ev.metaKey || ev.altKey || ev.isComposing) return;
    if (document.querySelector("dialog[open]")) return;
    const target = ev.target as HTMLElement;
    if (target.matches("input, textarea, select")) {
      if (ev.key === "Escape") target.blur();
      return;
    }
    const run = (fn: () => void) => {
      ev.preventDefault();
      fn();
    };
    switch (ev.key) {
      case "j":
      case "ArrowDown":
        return run(a.next);
      case "k":
      case "ArrowUp":
        return run(a.prev);
      case "a":
        return run(a.accept);
      case "r":
        return run(a.reject);
      case "A":
        return run(a.acceptConversation);
      case "R":
        return run(a.rejectConversation);
      case "o":
      case "Enter":
        if (target.matches("button, a")) return;
        return run(a.toggle);
      case "/":
        return run(a.focusFilter);
      case "1":
      case "2":
      case "3":
      case "4":
        return run(() => a.status(Number(ev.key) - 1));
      case "t":
        return run(a.theme);
      case "?":
        return run(a.help);
    }
  });
}
