"""``ffi-cookbook`` (also ``python -m ffi_cookbook``): take recipes away, start a library, add kernels.

    ffi-cookbook list                     the recipes, their variants, GPU needs, whether `add` takes them
    ffi-cookbook get RECIPE DEST          write a recipe as a self-contained folder
    ffi-cookbook new NAME DEST            start a kernel library package
    ffi-cookbook add RECIPE [--into DIR]  add a recipe's kernels and tests to that library

Exit status: 0 on success, 2 for a usage error or a refusal (unknown recipe,
a folder that is not such a library, a file that would be overwritten); a
refusal writes nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ffi_cookbook import catalog, kernel_library
from ffi_cookbook.catalog import RecipeError

REFUSED = 2


def _list(args) -> None:
    rows = [("RECIPE", "VARIANTS", "GPU", "ADD", "WHAT IT SHOWS")]
    for r in catalog.recipes():
        rows.append((r.name, "+".join(r.variants) or "-", r.gpu,
                     "no" if kernel_library.cannot_add(r) else "yes", r.title.replace("`", "")))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[4])
    print("\nGPU: 'optional' runs on a CPU and has a CUDA variant for a GPU; 'required': the point "
          "of the recipe\nneeds one. ADD: `ffi-cookbook add` can put its kernels into your library.")


def _get(args) -> None:
    r = catalog.recipe(args.recipe)
    dest = catalog.write_recipe(r, args.dest)
    print(f"wrote recipe {r.name} to {dest}")
    print(f"next: cd {dest} && python -m pip install -r requirements.txt, "
          "then the commands in README.md (or open notebook.ipynb)")


def _new(args) -> None:
    written = kernel_library.new_library(args.name, args.dest)
    print(f"wrote the {args.name} library ({len(written)} files) to {args.dest}")
    print(f"next: cd {args.dest} && python -m pip install . && python -m pip install "
          "-r requirements-test.txt && python -m pytest; add kernels with `ffi-cookbook add RECIPE`")


def _add(args) -> None:
    written = kernel_library.add_recipe(args.recipe, args.into)
    r = catalog.recipe(args.recipe)
    print(f"added {r.name} to {args.into}:")
    for rel in written:
        print(f"  {rel}")
    print(f"kernels: {', '.join(kernel_library.kernel_names(r.name))}; "
          "rebuild with `python -m pip install .`")


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="ffi-cookbook", description="Recipes of the TVM FFI Kernel Cookbook, to take away.",
        epilog="Exit status 2: a usage error or a refusal (nothing written).")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands.add_parser("list", help="list the recipes").set_defaults(run=_list)
    get = commands.add_parser("get", help="write a recipe as a self-contained folder")
    get.add_argument("recipe", help="folder name, number or slug: 10-rmsnorm, 10, rmsnorm")
    get.add_argument("dest", help="folder to create (missing or empty)")
    get.set_defaults(run=_get)
    new = commands.add_parser("new", help="start a kernel library package")
    new.add_argument("name", help="package name: lower case, a Python identifier")
    new.add_argument("dest", help="folder to create (missing or empty)")
    new.set_defaults(run=_new)
    add = commands.add_parser("add", help="add a recipe's kernels and tests to a library made by `new`")
    add.add_argument("recipe", help="folder name, number or slug: 10-rmsnorm, 10, rmsnorm")
    add.add_argument("--into", default=os.curdir, type=Path, help="the library folder (default: here)")
    add.set_defaults(run=_add)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        args.run(args)
    except RecipeError as err:
        print(f"ffi-cookbook {args.command}: error: {err}", file=sys.stderr)
        return REFUSED
    return 0


if __name__ == "__main__":
    sys.exit(main())
