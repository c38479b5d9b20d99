/**
 * mcp-tasks-jupyter: the MCP tasks of notebook kernels in JupyterLab and Notebook 7.
 *
 * One plugin per feature; `activate` only wires tokens together:
 * - registry: follows every notebook's (and console's) kernel over the comm;
 * - sidebar: the "MCP tasks" panel and the command that shows it;
 * - status bar: running and waiting counts;
 * - notifications: tasks that end or need input while their cell is out of sight
 *   (which statuses, and whether only out of sight: the plugin's settings);
 * - saved summaries: a task widget missing from a reopened notebook shows its saved summary
 *   (without ipywidgets' console errors);
 * - completion: one Tab inserts the only candidate in an `%mcp_*` magic.
 */

import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IConsoleTracker } from '@jupyterlab/console';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStatusBar } from '@jupyterlab/statusbar';

import { tearDownOnRestart } from './appteardown';
import { CellLocator } from './cells';
import { inMagic, SELECT_COMMAND, SingleCandidate } from './completion';
import { tasksIcon } from './icon';
import { TaskNotifier } from './notify';
import { readPolicy } from './policy';
import { ITaskRegistry, TaskRegistry } from './registry';
import {
  drawMissingWidgets,
  guardWidgetViews,
  notebookSite,
  WidgetModels
} from './savedviews';
import { SIDEBAR_ID, TasksSidebar } from './sidebar';
import { TasksStatus } from './statusbar';

export { ITaskRegistry } from './registry';

const OPEN_SIDEBAR = 'mcp-tasks-jupyter:open-sidebar';

const registryPlugin: JupyterFrontEndPlugin<ITaskRegistry> = {
  id: 'mcp-tasks-jupyter:registry',
  description:
    'Follows the MCP tasks of every notebook kernel over the mcp_tasks_jupyter comm.',
  autoStart: true,
  provides: ITaskRegistry,
  optional: [INotebookTracker, IConsoleTracker],
  activate: (
    _app: JupyterFrontEnd,
    notebooks: INotebookTracker | null,
    consoles: IConsoleTracker | null
  ): ITaskRegistry => {
    const registry = new TaskRegistry();
    // Only the first connection to a kernel carries its comms, and that may be a
    // console's (a console opened before the notebook on the same kernel).
    for (const tracker of [notebooks, consoles]) {
      if (tracker) {
        tracker.forEach(widget =>
          registry.followSession(widget.sessionContext)
        );
        tracker.widgetAdded.connect((_, widget) =>
          registry.followSession(widget.sessionContext)
        );
      }
    }
    return registry;
  }
};

const sidebarPlugin: JupyterFrontEndPlugin<void> = {
  id: 'mcp-tasks-jupyter:sidebar',
  description: 'The "MCP tasks" side panel for the current notebook\'s kernel.',
  autoStart: true,
  requires: [ITaskRegistry],
  optional: [INotebookTracker, ICommandPalette, ILayoutRestorer],
  activate: (
    app: JupyterFrontEnd,
    registry: ITaskRegistry,
    notebooks: INotebookTracker | null,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null
  ): void => {
    if (!notebooks) {
      return;
    }
    const locator = new CellLocator(app.shell, notebooks);
    const sidebar = new TasksSidebar({ registry, tracker: notebooks, locator });
    app.shell.add(sidebar, 'right', { rank: 650 });
    restorer?.add(sidebar, SIDEBAR_ID);
    app.commands.addCommand(OPEN_SIDEBAR, {
      label: 'Show MCP tasks',
      caption: "Show the MCP tasks of the current notebook's kernel",
      icon: tasksIcon,
      execute: () => app.shell.activateById(SIDEBAR_ID)
    });
    palette?.addItem({ command: OPEN_SIDEBAR, category: 'MCP tasks' });
  }
};

const summariesPlugin: JupyterFrontEndPlugin<void> = {
  id: 'mcp-tasks-jupyter:saved-summaries',
  description:
    'A task widget that cannot be drawn (a notebook reopened without its kernel) shows the summary saved with it.',
  autoStart: true,
  optional: [INotebookTracker],
  activate: (
    app: JupyterFrontEnd,
    notebooks: INotebookTracker | null
  ): void => {
    // Each new notebook, as it is made (before its outputs are drawn): our views whose model its
    // kernel lacks are drawn as their summaries without ipywidgets.
    const models = new WidgetModels();
    app.docRegistry.addWidgetExtension('Notebook', {
      createNew: widget => {
        guardWidgetViews(notebookSite(widget as NotebookPanel), models);
      }
    });
    notebooks?.forEach(panel => {
      guardWidgetViews(notebookSite(panel), models);
      drawMissingWidgets(panel);
      tearDownOnRestart(panel);
    });
    notebooks?.widgetAdded.connect((_, panel) => {
      drawMissingWidgets(panel);
      tearDownOnRestart(panel); // MCP Apps views get ui/resource-teardown when the kernel restarts
    });
  }
};

const completionPlugin: JupyterFrontEndPlugin<void> = {
  id: 'mcp-tasks-jupyter:single-completion',
  description:
    'One Tab inserts the only completion candidate in an %mcp_* magic of a notebook cell.',
  autoStart: true,
  optional: [INotebookTracker],
  activate: (
    app: JupyterFrontEnd,
    notebooks: INotebookTracker | null
  ): void => {
    if (!notebooks) {
      return;
    }
    const watcher = new SingleCandidate({
      inMagic: target => {
        const cell = notebooks.activeCell;
        const editor = cell?.editor;
        if (
          !cell ||
          !editor ||
          cell.model.type !== 'code' ||
          !(target instanceof Node) ||
          !editor.host.contains(target)
        ) {
          return false;
        }
        const { line, column } = editor.getCursorPosition();
        return inMagic(editor.model.sharedModel.getSource(), line, column);
      },
      select: () => {
        if (app.commands.hasCommand(SELECT_COMMAND)) {
          void app.commands.execute(SELECT_COMMAND);
        }
      }
    });
    watcher.listen(window);
  }
};

const statusBarPlugin: JupyterFrontEndPlugin<void> = {
  id: 'mcp-tasks-jupyter:status-bar',
  description:
    'Running and waiting MCP tasks of all kernels in the status bar.',
  autoStart: true,
  requires: [ITaskRegistry],
  optional: [IStatusBar, INotebookTracker],
  activate: (
    app: JupyterFrontEnd,
    registry: ITaskRegistry,
    statusBar: IStatusBar | null,
    notebooks: INotebookTracker | null
  ): void => {
    if (!statusBar) {
      return;
    }
    const current = notebooks && {
      id: () =>
        notebooks.currentWidget?.sessionContext.session?.kernel?.id ?? null,
      changed: notebooks.currentChanged
    };
    const item = new TasksStatus(
      registry,
      () => {
        if (app.commands.hasCommand(OPEN_SIDEBAR)) {
          void app.commands.execute(OPEN_SIDEBAR);
        }
      },
      current
    );
    statusBar.registerStatusItem('mcp-tasks-jupyter:status', {
      item,
      align: 'left',
      rank: 5,
      isActive: () => item.active,
      activeStateChanged: item.activeChanged
    });
  }
};

const notificationsPlugin: JupyterFrontEndPlugin<void> = {
  id: 'mcp-tasks-jupyter:notifications',
  description:
    'Notifies when an MCP task ends or needs input while its cell is out of sight.',
  autoStart: true,
  requires: [ITaskRegistry],
  optional: [INotebookTracker, ISettingRegistry],
  activate: (
    app: JupyterFrontEnd,
    registry: ITaskRegistry,
    notebooks: INotebookTracker | null,
    settings: ISettingRegistry | null
  ): void => {
    if (!notebooks) {
      return;
    }
    const notifier = new TaskNotifier(
      registry,
      new CellLocator(app.shell, notebooks)
    );
    // The defaults apply until the settings are loaded (and if they cannot be).
    settings
      ?.load(notificationsPlugin.id)
      .then(loaded => {
        const apply = (): void => {
          notifier.policy = readPolicy(loaded.composite);
        };
        apply();
        loaded.changed.connect(apply);
      })
      .catch(reason =>
        console.warn(
          'mcp-tasks-jupyter: cannot load the notification settings, using the defaults',
          reason
        )
      );
  }
};

export default [
  registryPlugin,
  sidebarPlugin,
  statusBarPlugin,
  notificationsPlugin,
  summariesPlugin,
  completionPlugin
];
