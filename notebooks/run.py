"""Run the example notebooks headless (the main job of ``make demo``) and print what each cell showed.

    python notebooks/run.py [NOTEBOOK ...]      # default: every notebooks/*.ipynb

Executed copies are written to build/notebooks/; the sources are left as they are. Exit 1 if a cell failed.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "build" / "notebooks"


def _shown(output: dict) -> str:
    if output.get("output_type") == "stream":
        return output.get("text", "")
    if output.get("output_type") == "error":
        return f"{output['ename']}: {output['evalue']}"
    return output.get("data", {}).get("text/plain", "")


def run(path: Path) -> bool:
    notebook = nbformat.read(path, as_version=4)
    began = time.monotonic()
    ok = True
    try:
        NotebookClient(
            notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}
        ).execute()
    except CellExecutionError as exc:
        ok = False
        print(f"  cell failed: {str(exc).strip().splitlines()[-1]}")
    OUT.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, OUT / path.name)
    print(f"== {path.name}: {'ok' if ok else 'FAILED'} in {time.monotonic() - began:.1f} s -> {OUT / path.name}")
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        print(f"  >>> {cell.source.splitlines()[-1] if cell.source else ''}")
        for output in cell.get("outputs", []):
            for line in _shown(output).strip().splitlines()[:6]:
                print(f"      {line}")
    return ok


if __name__ == "__main__":
    paths = [Path(p) for p in sys.argv[1:]] or sorted(HERE.glob("*.ipynb"))
    results = [run(p) for p in paths]
    sys.exit(0 if all(results) else 1)
