"""Every link inside the built HTML site reaches a page that exists and, with a ``#fragment``, an element of that id.

    python docs/check_anchors.py docs/_build/html

Sphinx's ``-W`` catches a cross-reference that resolves to nothing, not a link written with the wrong anchor (the
``[docs]`` links of the highlighted sources, for one). Links to other sites and to files that are not pages (images,
scripts, style sheets) are not checked. Exit status 1 lists the broken links, one per line.
"""

from __future__ import annotations

import posixpath
import re
import sys
from pathlib import Path
from urllib.parse import unquote

IDS = re.compile(r'\bid="([^"]+)"')
HREFS = re.compile(r'\bhref="([^"]+)"')


def broken_links(site: Path) -> list[str]:
    """The links of the pages under ``site`` whose page or anchor is missing, as ``page: link`` lines."""
    pages = {path.relative_to(site).as_posix(): path.read_text(encoding="utf-8") for path in site.rglob("*.html")}
    ids = {page: set(IDS.findall(text)) for page, text in pages.items()}
    broken = []
    for page, text in sorted(pages.items()):
        for href in HREFS.findall(text):
            if "://" in href or href.startswith(("mailto:", "javascript:", "data:")):
                continue
            path, _, fragment = href.partition("#")
            target = posixpath.normpath(posixpath.join(posixpath.dirname(page), unquote(path))) if path else page
            if not target.endswith(".html"):
                continue
            if target not in ids or (fragment and unquote(fragment) not in ids[target]):
                broken.append(f"{page}: {href}")
    return broken


def main(argv: list[str]) -> int:
    """Check the site at ``argv[0]``; print the broken links and return 1 if there are any, else 0."""
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print("usage: python docs/check_anchors.py SITE_DIRECTORY", file=sys.stderr)
        return 2
    broken = broken_links(Path(argv[0]))
    for line in broken:
        print(line)
    print(f"{len(broken)} broken links", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
