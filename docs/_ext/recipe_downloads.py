"""Download links: each recipe as a zip and a notebook, each page's code folder as a zip, and
the whole cookbook as one archive.

Every recipe page gets "Download notebook (.ipynb)" and "Download recipe (.zip)"
under its title; a guide or concept page that builds a ``code/`` folder gets
"Download this page's code (.zip)"; the get-started page gets "Download the cookbook
(.tar.gz)" (the home page links it in its text): the repository's files, the same a clone has (``tools.takeaway.source_archive``). The files come from ``tools.takeaway``
(the generator behind ``ffi-cookbook get``) and are written into the HTML output
(``downloads/``) when the build finishes, never into the source tree. The
notebook download is the zip's own ``notebook.ipynb`` (no outputs: the page
shows them, and it runs next to the recipe's sources).
"""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

from docutils import nodes
from sphinx.util.osutil import relative_uri

from tools import takeaway

FOLDER = "downloads"
SOURCE = "ffi-cookbook.tar.gz"
#: Pages that offer the whole cookbook's source under their title (the home page links it in
#: its text, below its first screen).
SOURCE_PAGES = {"get-started"}
_RECIPE_DOC = re.compile(r"^cookbook/(\d\d-[\w-]+)/notebook$")
_CODE_INCLUDE = re.compile(r"\{literalinclude\}\s+code/")


def code_folder_files(folder: Path) -> dict[str, bytes]:
    """The ``code/`` folder of a guide or concept page, self-contained, with a README.

    Its zip's top folder is ``code_folder_name(folder)``, e.g. ``guides-code``.
    """
    files = takeaway.folder_files(folder)
    section = folder.parent.name
    files["README.md"] = (
        f"# Code of the {section} pages of the TVM FFI Kernel Cookbook\n\n"
        "The C, C++ and CUDA files those pages show, with the helper headers they include\n"
        "(`include/ffi_cookbook/`). Build them with a Python that has\n"
        "`apache-tvm-ffi==0.1.15.post2` (with `nvcc` on `PATH` the CUDA sources too):\n\n"
        "```bash\n"
        'cmake -S . -B build -DPython_EXECUTABLE="$(command -v python)"\n'
        "cmake --build build\n"
        "```\n").encode()
    return dict(sorted(files.items()))


def code_folder_name(folder: Path) -> str:
    return f"{folder.parent.name}-code"


def _code_folder(app, docname: str) -> Path | None:
    """The ``code/`` folder a guide or concept page builds and shows, if any."""
    page = Path(app.env.doc2path(docname))
    folder = page.parent / "code"
    if (docname.startswith(("guides/", "concepts/")) and (folder / "CMakeLists.txt").is_file()
            and _CODE_INCLUDE.search(page.read_text())):
        return folder
    return None


def _links(app, docname: str) -> list[tuple[str, str]]:
    """(text, path under the output folder) of the downloads a page offers."""
    recipe = _RECIPE_DOC.match(docname)
    if recipe:
        name = recipe[1]
        return [("Download notebook (.ipynb)", f"{FOLDER}/{name}.ipynb"),
                ("Download recipe (.zip)", f"{FOLDER}/{name}.zip")]
    folder = _code_folder(app, docname)
    if folder:
        return [("Download this page's code (.zip)", f"{FOLDER}/{code_folder_name(folder)}.zip")]
    if docname in SOURCE_PAGES:
        return [("Download the cookbook (.tar.gz)", f"{FOLDER}/{SOURCE}")]
    return []


def _add_links(app, doctree) -> None:
    links = _links(app, app.env.docname)
    section = next(iter(doctree.findall(nodes.section)), None)
    if not links or section is None:
        return
    paragraph = nodes.paragraph(classes=["cookbook-downloads"])
    for index, (text, target) in enumerate(links):
        if index:
            paragraph += nodes.Text(" · ")
        # The link is made relative to the page once its URI is known (doctree-resolved).
        paragraph += nodes.reference(text, text, refuri=target, cookbook_download=target)
    title_at = section.first_child_matching_class(nodes.title)
    section.insert(0 if title_at is None else title_at + 1, paragraph)


def _resolve_links(app, doctree, docname: str) -> None:
    page = app.builder.get_target_uri(docname)
    for ref in list(doctree.findall(nodes.reference)):
        target = ref.get("cookbook_download")
        if not target:
            continue
        href = relative_uri(page, target)
        if app.builder.format == "html":  # `download`: save the file rather than open it
            html = f'<a class="reference download" download href="{escape(href)}">{escape(ref.astext())}</a>'
            ref.replace_self(nodes.raw("", html, format="html"))
        else:
            ref["refuri"] = href


def _write_downloads(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir) / FOLDER
    for docname in sorted(app.env.found_docs):
        match = _RECIPE_DOC.match(docname)
        if not match:
            continue
        name = match[1]
        files = takeaway.recipe_files(name)
        takeaway.write_zip(files, name, out / f"{name}.zip")
        (out / f"{name}.ipynb").write_bytes(files["notebook.ipynb"])
    out.mkdir(parents=True, exist_ok=True)
    (out / SOURCE).write_bytes(takeaway.source_archive(Path(app.srcdir).resolve().parent))
    folders = {_code_folder(app, docname) for docname in app.env.found_docs} - {None}
    for folder in sorted(folders):
        name = code_folder_name(folder)
        takeaway.write_zip(code_folder_files(folder), name, out / f"{name}.zip")


def setup(app):
    app.connect("doctree-read", _add_links)
    app.connect("doctree-resolved", _resolve_links)
    app.connect("build-finished", _write_downloads)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
