# SPDX-License-Identifier: BSD-3-Clause
"""MkDocs hook (mkdocs.yml, hooks:): the search index also as a script,
search/search_index.js (`var __index = {...}`), which the theme loads with a
script tag when the site is opened from disk (file://), where a page may not
fetch search_index.json. docs/javascripts/file-worker.js runs the search
worker there. Nothing of it matters over HTTP."""

from pathlib import Path

from mkdocs.plugins import event_priority


@event_priority(-100)  # after the search plugin has written its index
def on_post_build(config, **kwargs):
    index = Path(config.site_dir) / "search" / "search_index.json"
    if index.is_file():
        text = index.read_text(encoding="utf-8")
        (index.parent / "search_index.js").write_text(f"var __index = {text}\n", encoding="utf-8")
