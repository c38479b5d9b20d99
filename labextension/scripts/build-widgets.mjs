// Builds the anywidget front ends (src/widgets) into one ESM file and one CSS file per widget, in
// ../mcp_tasks_jupyter/jupyter/widgets/static/, where the widgets' Python classes point `_esm` and
// `_css`. Minified unless --dev; --watch rebuilds on change (with ANYWIDGET_HMR=1 a running kernel
// picks the new files up).
import * as esbuild from 'esbuild';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('..', import.meta.url));
const widgets = `${here}src/widgets`;
const outdir = `${here}../mcp_tasks_jupyter/jupyter/widgets/static`;
const dev = process.argv.includes('--dev');
const watch = process.argv.includes('--watch');

/** Each widget: its entry module and its style sheets, in cascade order (status.css, the palette, last). */
const WIDGETS = {
  task: ['task.ts', ['task.css', 'form.css', 'status.css']],
  board: ['board.ts', ['board.css', 'status.css']],
  compact: ['compact.ts', ['compact.css', 'status.css']],
  question: ['question.ts', ['form.css']],
  batch: ['batch.ts', ['task.css', 'batch.css', 'status.css']],
  signin: ['signin.ts', ['signin.css']],
  // The views' code is sent once per kernel (apphost, no style); each view's own module borrows it.
  apphost: ['apphost.ts', []],
  appview: ['appview.ts', ['app.css']]
};

const common = {
  bundle: true,
  minify: !dev,
  logLevel: 'warning',
  legalComments: 'none'
};

const builds = Object.entries(WIDGETS).flatMap(([name, [entry, sheets]]) => {
  const styled = sheets.length > 0;
  const banner = `/* mcp-tasks-jupyter ${name} widget, built from labextension/src/widgets by npm run build:widgets: do not edit */`;
  return [
    {
      ...common,
      entryPoints: [`${widgets}/${entry}`],
      outfile: `${outdir}/${name}.js`,
      format: 'esm',
      target: 'es2020',
      platform: 'browser',
      banner: { js: banner }
    },
    {
      ...common,
      stdin: {
        contents: sheets.map(sheet => `@import "./${sheet}";`).join('\n'),
        resolveDir: widgets,
        sourcefile: `${name}-bundle.css`,
        loader: 'css'
      },
      outfile: `${outdir}/${name}.css`,
      banner: { css: banner }
    }
  ].slice(0, styled ? 2 : 1);
});

if (watch) {
  for (const options of builds) {
    await (await esbuild.context(options)).watch();
  }
  console.log(`watching ${widgets}`);
} else {
  await Promise.all(builds.map(options => esbuild.build(options)));
}
