"""The built site in a real browser: headless Chromium (the Debian package that `make test`
installs) driven by Playwright's Python API, over a local HTTP server and nothing else.

Every page is loaded once at 1400 px and once at 390 px (a phone). The checks:

- no request leaves 127.0.0.1 (any other is blocked and counted), no console error;
- every internal link and #anchor resolves; every download link of a recipe page answers 200;
- the navigation opens at 390 and 768 px and collapses at 1400 px;
- at 1400 px at most 5% of the code and output blocks scroll sideways, and no output showing an
  error does (outputs wrap there); at 390 px no page scrolls sideways as a whole, no traceback
  scrolls, every other output block keeps its lines (no wrap: it scrolls inside its box, so a
  table keeps its columns) and a plot keeps at least 560 px (or its own width);
- no label "ran when the site was built" under any block;
- the home page at 1400 x 900 shows, without scrolling, the kernel, its build command, its call
  with the printed output and the start of the reading path;
- search finds ``TensorView`` with the site offline;
- no page names the checkout's path or the home folder (this one needs no browser).

Screenshots of a few pages go to ``<build>/screenshots`` (CI keeps them as artifacts).
The tests skip when the site is not built (`make docs`) or Chromium is missing.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urldefrag, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("FFI_COOKBOOK_BUILD_DIR") or ROOT / "_build")
SITE = BUILD / "html"
SCREENSHOTS = BUILD / "screenshots"
CHROMIUM = Path(os.environ.get("FFI_COOKBOOK_CHROMIUM") or "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WIDE, PHONE, TABLET = 1400, 390, 768
SCROLL_BUDGET = 0.05  # share of the code and output blocks that may scroll sideways at 1400 px
RECIPE_PAGE = "cookbook/01-add-one/notebook.html"

pytestmark = pytest.mark.skipif(not (SITE / "index.html").is_file(),
                                reason=f"the site is not built in {SITE}: run `make docs` first")


def site_pages() -> list[str]:
    return sorted(p.relative_to(SITE).as_posix() for p in SITE.rglob("*.html")
                  if not p.relative_to(SITE).parts[0].startswith("_"))


# -- no browser needed --------------------------------------------------------------------------

# tempfile.mkdtemp's names: "tmp" and eight letters, digits or underscores
TEMP_FOLDER = re.compile(re.escape(tempfile.gettempdir()) + r"/tmp[a-z0-9_]{8}\b")


def test_no_page_names_the_build_machine_paths():
    """Neither the checkout's absolute path, the build folder's (where a recipe's notebook runs,
    in its zip's folder), the home folder nor a temporary folder that Python's tempfile named
    appears on any page."""
    needles = {str(ROOT), str(ROOT.resolve()), str(SITE.parent.resolve())}
    home = Path.home()
    if home != Path("/"):
        needles |= {f"{home}/", f"{home.resolve()}/"}
    found = {}
    for name in site_pages():
        text = (SITE / name).read_text(errors="replace")
        hits = sum(text.count(n) for n in needles) + len(TEMP_FOLDER.findall(text))
        if hits:
            found[name] = hits
    assert not found, f"pages that print a path of this machine ({sorted(needles)}): {found}"


def test_footer_states_the_versions_the_site_was_built_with():
    from importlib import metadata

    page = (SITE / "index.html").read_text()
    footer = re.search(r'<p class="cookbook-built-with">(.*?)</p>', page, re.S)
    assert footer, "no 'built with' line in the footer of index.html"
    for dist in ("apache-tvm-ffi", "torch", "numpy"):
        assert f"{dist} {metadata.version(dist)}" in footer.group(1)
    assert re.search(r"compiled with (g\+\+|clang\+\+|\S+) \d", footer.group(1)), footer.group(1)


def test_footer_states_the_license_that_the_source_and_package_carry(root):
    page = (SITE / "index.html").read_text()
    assert "under the Apache License, Version 2.0" in page
    assert (root / "LICENSE").read_text().lstrip().startswith("Apache License")
    assert 'license = "Apache-2.0"' in (root / "pyproject.toml").read_text()


# -- the browser --------------------------------------------------------------------------------

class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def base_url():
    handler = functools.partial(_QuietHandler, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()


class Blocked:
    """Requests to anything but the local server: aborted, and remembered."""

    def __init__(self):
        self.urls: list[str] = []

    def __call__(self, route):
        if urlsplit(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            self.urls.append(route.request.url)
            route.abort()


@pytest.fixture(scope="module")
def browser_context():
    if not CHROMIUM.is_file():
        pytest.skip(f"Chromium is missing ({CHROMIUM}): `make test` installs it (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (make venv)")
    profile = tempfile.mkdtemp(prefix="cookbook-chromium-")
    blocked = Blocked()
    with sync_api.sync_playwright() as p:
        # A fresh profile; Playwright's own browser downloads are never used.
        context = p.chromium.launch_persistent_context(
            profile, executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS,
            viewport={"width": WIDE, "height": 900}, service_workers="block")
        context.route("**/*", blocked)
        context.blocked = blocked
        try:
            yield context
        finally:
            context.close()
            shutil.rmtree(profile, ignore_errors=True)


class Watched:
    """A page with its console errors, uncaught exceptions and failed responses recorded."""

    def __init__(self, context):
        self.page = context.new_page()
        self.errors: list[str] = []
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(f"console: {m.text}"))
        self.page.on("pageerror", lambda e: self.errors.append(f"exception: {e}"))
        self.page.on("response", lambda r: r.status >= 400 and self.errors.append(f"{r.status}: {r.url}"))

    def open(self, url: str, width: int):
        self.errors.clear()
        self.page.set_viewport_size({"width": width, "height": 900})
        self.page.goto(url, wait_until="load")
        return self.page


# Measured in the page: code and output blocks that are rendered, whether each scrolls sideways,
# whether it is an output showing an error, and whether the page as a whole scrolls sideways.
MEASURE = """() => {
  const shown = [...document.querySelectorAll('.bd-article pre')].filter(p => p.offsetParent !== null);
  const errorLine = /(Traceback|Error|Exception)\\b/;
  return {
    blocks: shown.length,
    scrolling: shown.filter(p => p.scrollWidth > p.clientWidth + 1).length,
    scrollingErrors: shown.filter(p => p.scrollWidth > p.clientWidth + 1
                                       && p.closest(window.innerWidth < 768 ? '.output.traceback, .output.stderr' : '.cell_output, .output')
                                       && errorLine.test(p.textContent)).map(p => p.textContent.slice(0, 80)),
    wrappingOutputs: shown.filter(p => p.closest('.cell_output') && !p.closest('.output.traceback, .output.stderr'))
      .filter(p => { const s = getComputedStyle(p);
                     return s.whiteSpace !== 'pre' || !['auto', 'scroll'].includes(s.overflowX); })
      .map(p => p.textContent.slice(0, 80)),
    smallPlots: [...document.querySelectorAll('.bd-article .cell_output img')].filter(i => i.offsetParent !== null
      && i.naturalWidth > 0 && i.getBoundingClientRect().width + 1 < Math.min(560, i.naturalWidth)).map(i => i.src),
    ranLabels: [...document.querySelectorAll('p.snippet-label')].filter(p => /ran when the site was built/.test(p.textContent)).length,
    pageScrollsSideways: document.documentElement.scrollWidth > window.innerWidth + 1,
    duplicateIds: (() => { const seen = new Set(), dup = new Set();
      document.querySelectorAll('[id]').forEach(e => seen.has(e.id) ? dup.add(e.id) : seen.add(e.id));
      return [...dup]; })(),
    ids: [...document.querySelectorAll('[id]')].map(e => e.id),
    copyButtons: document.querySelectorAll('.bd-article button.copybtn').length,
    copyButtonsOnOutputs: document.querySelectorAll('.output button.copybtn, .cell_output button.copybtn').length,
    searchFields: [...document.querySelectorAll('.search-button-field')].filter(e => e.offsetParent !== null).length,
    contentsRepeated: [...document.querySelectorAll('nav.page-toc ul')].flatMap(ul => {
      const names = [...ul.querySelectorAll(':scope > li > a')].map(a => a.textContent.trim());
      return names.filter((n, i) => names.indexOf(n) !== i); }),
    links: [...document.querySelectorAll('a[href]')].map(a => a.href),
  };
}"""


@pytest.fixture(scope="module")
def crawl(browser_context, base_url):
    """Every page at 1400 px and at 390 px: what MEASURE says, and the errors seen."""
    start = time.monotonic()
    watched = Watched(browser_context)
    result = {}
    for name in site_pages():
        wide = dict(watched.open(base_url + name, WIDE).evaluate(MEASURE), errors=list(watched.errors))
        phone = watched.open(base_url + name, PHONE).evaluate(MEASURE)
        phone["errors"] = list(watched.errors)
        result[name] = {"wide": wide, "phone": phone}
    watched.page.close()
    wide_blocks = sum(r["wide"]["blocks"] for r in result.values())
    print(f"\nbrowser: {len(result)} pages in {time.monotonic() - start:.1f} s; "
          f"{sum(r['wide']['scrolling'] for r in result.values())} of {wide_blocks} blocks scroll "
          f"sideways at {WIDE} px, {sum(r['phone']['scrolling'] for r in result.values())} of "
          f"{sum(r['phone']['blocks'] for r in result.values())} at {PHONE} px; "
          f"{len(browser_context.blocked.urls)} requests blocked")
    return result


def test_every_page_loads_offline_without_console_errors(crawl, browser_context):
    assert len(crawl) >= 20, sorted(crawl)
    assert not browser_context.blocked.urls, f"requests that left 127.0.0.1: {browser_context.blocked.urls[:10]}"
    errors = {name: r["wide"]["errors"] + r["phone"]["errors"] for name, r in crawl.items()}
    errors = {name: e for name, e in errors.items() if e}
    assert not errors, errors


def test_element_ids_are_unique(crawl):
    duplicates = {name: r["wide"]["duplicateIds"] for name, r in crawl.items() if r["wide"]["duplicateIds"]}
    assert not duplicates, duplicates


def test_copy_buttons_search_field_and_contents_appear_once(crawl):
    """Copy buttons on code, never on outputs; one search field; no page contents line twice."""
    assert sum(r["wide"]["copyButtons"] for r in crawl.values()) > 100
    on_outputs = {name: r["wide"]["copyButtonsOnOutputs"] for name, r in crawl.items()
                  if r["wide"]["copyButtonsOnOutputs"]}
    assert not on_outputs, f"copy buttons on outputs: {on_outputs}"
    fields = {name: r["wide"]["searchFields"] for name, r in crawl.items() if r["wide"]["searchFields"] != 1}
    assert not fields, f"pages without exactly one search field at {WIDE} px: {fields}"
    repeated = {name: r["wide"]["contentsRepeated"] for name, r in crawl.items() if r["wide"]["contentsRepeated"]}
    assert not repeated, f"lines repeated in one list of a page's contents: {repeated}"


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=10) as reply:
            return reply.status
    except urllib.error.HTTPError as error:
        return error.code


def test_internal_links_and_anchors_resolve(crawl, base_url):
    ids = {base_url + name: set(r["wide"]["ids"]) for name, r in crawl.items()}
    status: dict[str, int] = {}
    broken = []
    for name, r in crawl.items():
        for link in r["wide"]["links"]:
            if not link.startswith(base_url):
                continue  # an external link: not followed (the site is checked offline)
            target, anchor = urldefrag(link)
            if target.endswith("/"):
                target += "index.html"
            if target not in status:
                status[target] = _status(target)
            if status[target] != 200:
                broken.append(f"{name}: {link} ({status[target]})")
            elif anchor and target in ids and anchor not in ids[target]:
                broken.append(f"{name}: {link} (no element with id {anchor!r})")
    assert status, "no internal links found"
    assert not broken, broken


def test_recipe_download_links_answer(crawl, base_url):
    recipes = [name for name in crawl if re.fullmatch(r"cookbook/\d\d-[^/]+/notebook\.html", name)]
    assert recipes
    downloads_ext = (".zip", ".ipynb", ".md", ".py", ".cc", ".cu", ".txt")
    for name in recipes:
        links = {urldefrag(link)[0] for link in crawl[name]["wide"]["links"]
                 if link.startswith(base_url) and link.endswith(downloads_ext)}
        assert any(link.endswith(".zip") for link in links), f"{name}: no recipe zip to download"
        for link in links:
            with urllib.request.urlopen(link, timeout=10) as reply:
                assert reply.status == 200 and reply.read(1), f"{name}: {link}"


def test_code_and_outputs_fit_the_screen(crawl):
    blocks = sum(r["wide"]["blocks"] for r in crawl.values())
    scrolling = {name: r["wide"]["scrolling"] for name, r in crawl.items() if r["wide"]["scrolling"]}
    assert blocks > 100
    assert sum(scrolling.values()) <= SCROLL_BUDGET * blocks, (
        f"{sum(scrolling.values())} of {blocks} blocks scroll sideways at {WIDE} px: {scrolling}")
    errors = {name: r[w]["scrollingErrors"] for name, r in crawl.items() for w in ("wide", "phone")
              if r[w]["scrollingErrors"]}
    assert not errors, f"outputs with an error line that scroll sideways: {errors}"
    sideways = [name for name, r in crawl.items() if r["phone"]["pageScrollsSideways"]]
    assert not sideways, f"pages wider than a {PHONE} px screen: {sideways}"


def test_outputs_keep_their_lines_and_plots_their_size_on_a_phone(crawl):
    wrapping = {name: r["phone"]["wrappingOutputs"] for name, r in crawl.items() if r["phone"]["wrappingOutputs"]}
    assert not wrapping, f"output blocks that wrap at {PHONE} px instead of scrolling in their box: {wrapping}"
    assert sum(1 for r in crawl.values() if r["phone"]["blocks"]) > 20  # pages with code were measured
    small = {name: r["phone"]["smallPlots"] for name, r in crawl.items() if r["phone"]["smallPlots"]}
    assert not small, f"plots shrunk below 560 px at {PHONE} px: {small}"


def test_no_label_says_a_block_ran(crawl):
    """What ran is said once per page; a label under a block is kept for what did not run."""
    labelled = {name: r["wide"]["ranLabels"] for name, r in crawl.items() if r["wide"]["ranLabels"]}
    assert not labelled, labelled


HOME_FIRST_SCREEN = """() => {
  const section = document.querySelector('section#a-kernel-built-and-called');
  const box = e => e ? e.getBoundingClientRect() : null;
  const kernel = section && section.querySelector('div.literal-block-wrapper pre');
  const build = section && [...section.querySelectorAll('div.highlight-bash pre')][0];
  const output = section && section.querySelector('.cell_output pre');
  const path = document.querySelector('section#learn-in-this-order ol > li');
  return {kernel: box(kernel), kernelLines: kernel ? kernel.textContent.trim().split('\\n').length : 0,
          kernelFits: kernel ? kernel.scrollWidth <= kernel.clientWidth : false,
          kernelText: kernel ? kernel.textContent : '', build: box(build), buildText: build ? build.textContent : '',
          output: box(output), outputText: output ? output.textContent : '', path: box(path),
          pathText: path ? path.textContent : '', height: window.innerHeight};
}"""


def test_home_shows_kernel_build_output_and_path_on_one_screen(browser_context, base_url):
    watched = Watched(browser_context)
    page = watched.open(base_url + "index.html", WIDE)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"home-{WIDE}px.png"))
    seen = page.evaluate(HOME_FIRST_SCREEN)
    for part in ("kernel", "build", "output", "path"):
        assert seen[part] is not None, f"the home page has no {part}"
        assert seen[part]["bottom"] <= seen["height"], f"{part} ends at {seen[part]['bottom']:.0f} px, below the first screen"
    assert seen["kernelLines"] <= 25 and "TVM_FFI_DLL_EXPORT_TYPED_FUNC" in seen["kernelText"]
    assert seen["kernelFits"], "the kernel's longest line scrolls out of its box on a wide screen"
    assert "tvm-ffi-config" in seen["buildText"]
    assert seen["outputText"].strip() == "tensor([1., 2., 3., 4.])"
    assert "Get started" in seen["pathText"]
    page.set_viewport_size({"width": PHONE, "height": 900})
    page.screenshot(path=str(SCREENSHOTS / f"home-{PHONE}px.png"), full_page=True)
    assert not watched.errors, watched.errors
    watched.page.close()


def _open_dialog(page, toggle: str, dialog: str):
    page.locator(f"{toggle}:visible").first.click()
    page.wait_for_selector(f"{dialog}[open]", timeout=5000)
    links = page.locator(f"{dialog} a:visible").count()
    page.keyboard.press("Escape")
    page.wait_for_selector(f"{dialog}:not([open])", state="attached", timeout=5000)
    return links


@pytest.mark.parametrize("width", [PHONE, TABLET])
def test_navigation_opens_on_narrow_screens(browser_context, base_url, width):
    watched = Watched(browser_context)
    page = watched.open(base_url + RECIPE_PAGE, width)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"recipe-{width}px.png"))
    site_links = _open_dialog(page, ".primary-toggle", "#pst-primary-sidebar-modal")
    assert site_links >= 10, f"the site navigation at {width} px shows {site_links} links"
    page.locator(".primary-toggle:visible").first.click()
    page.wait_for_selector("#pst-primary-sidebar-modal[open]")
    page.screenshot(path=str(SCREENSHOTS / f"navigation-{width}px.png"))
    page.keyboard.press("Escape")
    page_links = _open_dialog(page, ".secondary-toggle", "#pst-secondary-sidebar-modal")
    assert page_links >= 3, f"the page contents at {width} px show {page_links} links"
    assert not watched.errors, watched.errors
    watched.page.close()


def test_navigation_collapses_on_a_wide_screen(browser_context, base_url):
    watched = Watched(browser_context)
    page = watched.open(base_url + RECIPE_PAGE, WIDE)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"recipe-{WIDE}px.png"))
    article = page.locator(".bd-article")
    before = article.bounding_box()["width"]
    page.locator(".primary-toggle:visible").first.click()
    page.wait_for_function("getComputedStyle(document.getElementById('pst-primary-sidebar'))"
                           ".visibility === 'hidden'", timeout=5000)
    page.wait_for_timeout(400)  # the theme's transition
    wider = article.bounding_box()["width"]
    assert wider > before + 150, f"article {before:.0f} px wide, {wider:.0f} px with the navigation collapsed"
    page.locator(".primary-toggle:visible").first.click()
    page.wait_for_function("getComputedStyle(document.getElementById('pst-primary-sidebar'))"
                           ".visibility === 'visible'", timeout=5000)
    assert not watched.errors, watched.errors
    watched.page.close()


def test_search_finds_tensorview_offline(browser_context, base_url):
    watched = Watched(browser_context)
    page = watched.open(base_url + "search.html?q=TensorView", WIDE)
    page.wait_for_selector("#search-results ul.search li", timeout=20000)
    hits = page.locator("#search-results ul.search li").count()
    page.screenshot(path=str(SCREENSHOTS / "search-TensorView.png"))
    assert hits >= 3, f"search for TensorView found {hits} pages"
    assert not browser_context.blocked.urls
    assert not watched.errors, watched.errors
    watched.page.close()


def test_first_visit_is_light_and_icons_draw(browser_context, base_url):
    """The first page, cold: its weight (the theme's 1.5 MB icon script is not loaded: the icons
    come from the theme's web font) and a visible menu icon."""
    watched = Watched(browser_context)
    cdp = browser_context.new_cdp_session(watched.page)
    cdp.send("Network.clearBrowserCache")
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})  # what a first visit loads
    page = watched.open(base_url + "index.html", WIDE)
    page.wait_for_load_state("networkidle")
    sizes = dict(page.evaluate("""() => performance.getEntriesByType('navigation')
        .concat(performance.getEntriesByType('resource')).map(e => [e.name, e.encodedBodySize])"""))
    total = sum(sizes.values())
    print(f"\nfirst page load: {len(sizes)} responses, {total / 1e6:.2f} MB")
    assert not any("fontawesome.js" in url for url in sizes)
    assert total < 1_500_000, sorted(sizes.items(), key=lambda kv: -kv[1])[:5]
    page.evaluate("document.fonts.ready")
    icon = page.evaluate("""() => { const i = document.querySelector('.primary-toggle .fa-bars');
        const s = getComputedStyle(i, '::before'); return [s.fontFamily, s.content, i.getBoundingClientRect().width]; }""")
    assert "Font Awesome" in icon[0] and icon[1] not in ("none", "normal", "") and icon[2] > 0, icon
    page.set_viewport_size({"width": PHONE, "height": 900})
    page.screenshot(path=str(SCREENSHOTS / f"index-{PHONE}px.png"))
    assert not watched.errors, watched.errors
    watched.page.close()
