# SPDX-License-Identifier: BSD-3-Clause
"""MkDocs hook (mkdocs.yml, hooks:): each Graphviz file docs/diagrams/NAME.dot
is drawn as diagrams/NAME.svg when the site is built (`dot -Tsvg`), so the
pictures follow their text and nothing is fetched when a page is viewed.
A page shows one as ![...](diagrams/NAME.svg). Without Graphviz the build
stops with one line saying how to install it."""

import shutil
import subprocess

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File


def on_files(files, config, **kwargs):
    sources = [f for f in files if f.src_uri.startswith("diagrams/") and f.src_uri.endswith(".dot")]
    if not sources:
        return files
    dot = shutil.which("dot")
    if not dot:
        raise PluginError(
            "dot (Graphviz) is not installed: it draws docs/diagrams/*.dot "
            "(make deps, or apt-get install graphviz)"
        )
    for f in sources:
        p = subprocess.run(
            [dot, "-Tsvg", f.abs_src_path], capture_output=True, text=True, timeout=60
        )
        if p.returncode != 0 or p.stderr.strip():  # a warning is an error, as in --strict
            raise PluginError(f"docs/{f.src_uri}: dot: {p.stderr.strip() or p.returncode}")
        files.remove(f)  # the picture is published, not its text
        svg = f.src_uri[: -len(".dot")] + ".svg"
        files.append(File.generated(config, svg, content=p.stdout))
    return files
