/**
 * What jsdom lacks and `@lumino/widgets` (through `@lumino/dragdrop`) reads
 * when it loads. Import this before any module that imports Lumino widgets.
 */

if (!('DragEvent' in globalThis)) {
  Object.defineProperty(globalThis, 'DragEvent', {
    configurable: true,
    value: class DragEvent extends MouseEvent {}
  });
}
