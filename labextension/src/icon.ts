import { LabIcon } from '@jupyterlab/ui-components';

/** A checklist with a clock: tasks that take a while. `jp-icon3` follows the theme. */
const svgstr = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <g class="jp-icon3" fill="#616161">
    <path d="M3 4h11v2H3zm0 5h9v2H3zm0 5h6v2H3z"/>
    <path d="M17 10a6 6 0 1 0 0 12 6 6 0 0 0 0-12zm0 2a4 4 0 1 1 0 8 4 4 0 0 1 0-8zm-1 1v4.4l3.3 2 .9-1.5-2.2-1.3V13z"/>
  </g>
</svg>`;

export const tasksIcon = new LabIcon({
  name: 'mcp-tasks-jupyter:tasks',
  svgstr
});
