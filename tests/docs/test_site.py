# SPDX-License-Identifier: BSD-3-Clause
"""The documentation site as a newcomer opens it: built as `make docs`
builds it, then opened from disk (file://, build/site/index.html) in
headless Chromium: every link of the navigation opens its page (not a
folder's listing), a query typed into the search box lists results, every
picture shows, and nothing is fetched from the network; the same served
over HTTP. Each check is shown failing on a site built to be wrong:
directory URLs (links to folders) with a font from the network, and a site
without the worker shim (search stays "Initializing") and without a diagram
(a broken picture). The diagrams are drawn from docs/diagrams/*.dot by the
build (scripts/site/diagrams.py)."""

import functools
import http.server
import json
import os
import shutil
import subprocess
import threading

import pytest
from browser import Browser, chromium
from conftest import REPO
from declared import missing

MKDOCS = REPO / ".venv" / "bin" / "mkdocs"
QUERY = "ceiling"


def build(config, site):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    p = subprocess.run(
        [str(MKDOCS), "build", "-q", "-f", str(config), "-d", str(site)],
        cwd=REPO,  # snippets' base_path is the top of the repository
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    return site


@pytest.fixture(scope="module")
def browser():
    if not chromium():
        missing("chromium", "not installed (scripts/install-deps.sh installs it)")
    if not MKDOCS.exists():
        missing("venv", f"{MKDOCS} missing (make venv)")
    b = Browser()
    yield b
    b.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    return build(REPO / "mkdocs.yml", tmp_path_factory.mktemp("site") / "site")


def problems(browser, site, home=None):
    """What a reader of the site opened from disk (or at `home`, its
    index.html served) would meet: one line each."""
    found = []
    home = home or (site / "index.html").as_uri()
    browser.open(home)
    links = browser.js(
        "[...new Set([...document.querySelectorAll('nav.md-nav--primary a.md-nav__link[href]')]"
        ".map(a => a.href.split('#')[0]))]"
    )
    if not links or len(links) < 10:
        found.append(f"the home page's navigation has {len(links or [])} links")
    for link in dict.fromkeys([home, *(links or [])]):  # each page once
        browser.open(link)
        page = browser.js(
            "({title: document.title,"
            " article: !!document.querySelector('article.md-content__inner'),"
            " remote: [...document.querySelectorAll('script[src], link[href]:not([rel=canonical]),"
            " img[src], iframe[src]')].map(e => e.src || e.href)"
            ".filter(n => !/^(file|data|about|javascript):/.test(n)"
            " && !n.startsWith(location.origin + '/')),"
            " broken: [...document.images].filter(i => i.complete && !i.naturalWidth)"
            ".map(i => i.getAttribute('src'))})"
        )
        if not link.endswith(".html") or not page["article"]:
            found.append(f"nav link {link} opens {page['title']!r}, not a page of the site")
        for url in page["remote"]:
            found.append(f"{link} fetches {url} from the network")
        for src in page["broken"]:
            found.append(f"{link} shows a broken picture {src}")
    browser.open(home)
    browser.js(
        "(() => { const t = document.getElementById('__search'); t.checked = true;"
        " t.dispatchEvent(new Event('change'));"
        " document.querySelector('.md-search__input').focus();"
        " })()"
    )
    browser.type(QUERY)
    hits = browser.wait("document.querySelectorAll('.md-search-result__item').length", 30)
    if not hits:
        meta = browser.js("document.querySelector('.md-search-result__meta')?.textContent.trim()")
        found.append(f"search for {QUERY!r} lists nothing (it says {meta!r})")
    return found


def test_the_site_opened_from_disk_works(browser, site):
    assert problems(browser, site) == []


def test_the_site_served_over_http_works(browser, site):
    """The same site served (python -m http.server's handler, on a free
    local port): the same checks hold."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        home = f"http://127.0.0.1:{server.server_address[1]}/index.html"
        assert problems(browser, site, home) == []
    finally:
        server.shutdown()
        server.server_close()


def test_links_to_folders_and_fonts_from_the_network_are_caught(browser, tmp_path):
    """The same pages with directory URLs (links end in a folder, which
    file:// lists) and the theme's web font: the check names both."""
    config = tmp_path / "mkdocs.yml"
    config.write_text(
        f"INHERIT: {REPO / 'mkdocs.yml'}\n"
        f"docs_dir: {REPO / 'docs'}\n"
        f"hooks: [{json.dumps(str(REPO / 'scripts' / 'site' / 'offline_search.py'))}]\n"
        "use_directory_urls: true\n"
        "theme: {name: material, font: {text: Roboto}}\n"
    )
    found = problems(browser, build(config, tmp_path / "site"))
    assert any("opens" in f and "getting-started/" in f for f in found), found
    assert any("fonts.googleapis.com" in f for f in found), found


def test_search_without_the_frame_worker_is_caught(browser, site, tmp_path):
    """A browser refuses a worker from a file URL: without
    docs/javascripts/file-worker.js, search stays at "Initializing"."""
    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    (copy / "javascripts" / "file-worker.js").write_text("// left out\n")
    (copy / "diagrams" / "architecture.svg").unlink()  # and a picture not drawn
    found = problems(browser, copy)
    assert found == [
        f"{(copy / 'index.html').as_uri()} shows a broken picture diagrams/architecture.svg",
        f"search for {QUERY!r} lists nothing (it says 'Initializing search')",
    ], found


def test_a_build_without_graphviz_says_how_to_get_it(tmp_path):
    """The diagrams need dot: without it the build stops with one line
    naming the fix, not a site with broken pictures."""
    if not MKDOCS.exists():
        missing("venv", f"{MKDOCS} missing (make venv)")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PATH": str(tmp_path)}  # no dot on it
    p = subprocess.run(
        [str(MKDOCS), "build", "-q", "-f", str(REPO / "mkdocs.yml"), "-d", str(tmp_path / "s")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode != 0, p.stderr[-2000:]
    assert "dot (Graphviz) is not installed" in p.stderr and "make deps" in p.stderr, p.stderr
