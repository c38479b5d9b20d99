/**
 * Where a task's cell is: which notebook shows it, whether the user can see it
 * right now, and how to bring it into view.
 */

import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

export interface ICellLocation {
  readonly panel: NotebookPanel;
  /** The cell's index, or -1 when the task has no cell or the cell is gone. */
  readonly index: number;
}

export class CellLocator {
  constructor(
    private readonly _shell: JupyterFrontEnd.IShell,
    private readonly _tracker: INotebookTracker
  ) {}

  /** The notebooks whose session runs the given kernel. */
  panelsFor(kernelId: string): NotebookPanel[] {
    const panels: NotebookPanel[] = [];
    this._tracker.forEach(panel => {
      if (panel.sessionContext.session?.kernel?.id === kernelId) {
        panels.push(panel);
      }
    });
    return panels;
  }

  /**
   * The notebook (and index) of a task's cell. Prefers `preferred`, then a notebook
   * holding the cell, then any notebook on that kernel; null if none runs it.
   */
  locate(
    kernelId: string,
    cellId: string | null,
    preferred?: NotebookPanel | null
  ): ICellLocation | null {
    const panels = this.panelsFor(kernelId);
    if (preferred && panels.includes(preferred)) {
      panels.splice(panels.indexOf(preferred), 1);
      panels.unshift(preferred);
    }
    if (panels.length === 0) {
      return null;
    }
    if (cellId) {
      for (const panel of panels) {
        const index = indexOfCell(panel, cellId);
        if (index >= 0) {
          return { panel, index };
        }
      }
    }
    return { panel: panels[0], index: -1 };
  }

  /**
   * Whether the user can see the task's cell now: the browser tab is shown, its
   * notebook is shown (the selected tab of its area) and the cell's node lies
   * at least partly inside the notebook's scroll viewport. A task without a
   * cell counts as seen when a notebook on its kernel is the current widget.
   */
  isVisible(kernelId: string, cellId: string | null): boolean {
    if (document.visibilityState === 'hidden') {
      return false;
    }
    const location = this.locate(kernelId, cellId, this._currentPanel());
    if (!location || !location.panel.isVisible) {
      return false;
    }
    const { panel, index } = location;
    if (index < 0) {
      return !cellId && this._shell.currentWidget === panel;
    }
    const cell = panel.content.widgets[index];
    if (!cell || !cell.node.isConnected) {
      return false;
    }
    const rect = cell.node.getBoundingClientRect();
    const viewport = panel.content.outerNode.getBoundingClientRect();
    return (
      rect.height > 0 &&
      rect.bottom > viewport.top &&
      rect.top < viewport.bottom
    );
  }

  /** Activate the task's notebook and make its cell the active one, scrolled into view. */
  async reveal(
    kernelId: string,
    cellId: string | null,
    preferred?: NotebookPanel | null
  ): Promise<boolean> {
    const location = this.locate(kernelId, cellId, preferred);
    if (!location) {
      return false;
    }
    const { panel, index } = location;
    this._shell.activateById(panel.id);
    if (index < 0) {
      return false;
    }
    const notebook = panel.content;
    notebook.activeCellIndex = index;
    const cell = notebook.widgets[index];
    if (cell) {
      await notebook.scrollToCell(cell, 'center');
    }
    return true;
  }

  private _currentPanel(): NotebookPanel | null {
    return this._tracker.currentWidget;
  }
}

function indexOfCell(panel: NotebookPanel, cellId: string): number {
  const widgets = panel.content.widgets;
  for (let i = 0; i < widgets.length; i++) {
    if (widgets[i].model.id === cellId) {
      return i;
    }
  }
  return -1;
}
