"""Reading an HTML page back in the tests: its elements, its visible text and its links."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


@dataclass
class Page:
    """What an HTML document holds: every start tag with its attributes, the text outside
    <style> and <script> with whitespace collapsed, and the text of each element with an id."""

    tags: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    text: str = ""
    by_id: dict[str, str] = field(default_factory=dict)

    @property
    def links(self) -> list[str]:
        """Every href and src, as written."""
        return [
            value
            for _, attributes in self.tags
            for name, value in attributes.items()
            if name in ("href", "src")
        ]

    def broken_links(self, page: Path) -> list[str]:
        """Links of the page at `page` that leave it (a scheme, an absolute path) or name no
        file or no element of it."""
        ids = {attributes["id"] for _, attributes in self.tags if "id" in attributes}
        broken = []
        for link in self.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or parts.path.startswith("/"):
                broken.append(link)
            elif not parts.path:
                if parts.fragment not in ids:
                    broken.append(link)
            elif not (page.parent / unquote(parts.path)).is_file():
                broken.append(link)
        return broken


# Elements without an end tag.
VOID = frozenset({"meta", "img", "br", "hr", "link", "input", "col", "source", "wbr"})


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page()
        self.open: list[tuple[str, str | None, list[str]]] = []
        self.texts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        self.page.tags.append((tag, attributes))
        if tag in ("style", "script"):
            self.hidden += 1
        if tag not in VOID:
            self.open.append((tag, attributes.get("id"), []))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("style", "script"):
            self.hidden -= 1
        while self.open:
            name, element_id, texts = self.open.pop()
            if element_id is not None:
                self.page.by_id[element_id] = " ".join(" ".join(texts).split())
            if self.open:
                self.open[-1][2].extend(texts)
            if name == tag:
                break

    def handle_data(self, data: str) -> None:
        if self.hidden:
            return
        self.texts.append(data)
        if self.open:
            self.open[-1][2].append(data)


def read_page(text: str) -> Page:
    reader = _Reader()
    reader.feed(text)
    reader.close()
    reader.page.text = " ".join(" ".join(reader.texts).split())
    return reader.page
