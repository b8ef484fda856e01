"""Text of a campaign file in Snakemake's report: a guideline whose source and text hold markup
shows as text; the report holds no element and no script that the config wrote."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from html_support import Page, read_page
from workflow_project import snakemake

pytestmark = pytest.mark.workflow

# GL4 as an inline guideline of the tiny campaign, its words written by someone else.
MARKED = {
    "id": "MARKED",
    "source": "<script>alert('src')</script>",
    "text": "neighbor_allgather ≼ neighbor_alltoall <b onmouseover=alert(2)>mock</b> & co",
    "relation": "le",
    "lhs": {"op": "neighbor_allgather"},
    "rhs": {"op": "neighbor_alltoall"},
}
# Snakemake's report lists each item's job params in the inline script `var results = {…};`.
RESULTS_SCRIPT = re.compile(r'<script id="results">\s*var results = (.*?);\s*</script>', re.S)


def report(project: Path, name: str) -> str:
    path = project / "results" / "tiny" / name
    snakemake(project, "--profile", "profiles/local", "--report", str(path))
    return path.read_text(encoding="utf-8")


def scripts(page: Page) -> Counter[str]:
    """The page's <script> elements by id ("" for those without one)."""
    return Counter(attributes.get("id", "") for tag, attributes in page.tags if tag == "script")


def handlers(page: Page) -> list[tuple[str, str]]:
    """Every element with an event handler attribute (on…), and that attribute."""
    return [
        (tag, name) for tag, attributes in page.tags for name in attributes if name.startswith("on")
    ]


def shown_guidelines(html: str) -> list[dict[str, Any]]:
    """The guidelines param of the analyse rule as the report holds it for tests.csv."""
    match = RESULTS_SCRIPT.search(html)
    assert match is not None, "no results script in the report"
    results = json.loads(match[1])
    [params] = {
        item["job_properties"]["params"]
        for path, item in results.items()
        if path.endswith("guidelines/tests.csv")
    }
    # Snakemake writes the params as `name=value, …` with every `"` preceded by a backslash.
    text = params.replace('\\"', '"')
    start = text.index("guidelines=") + len("guidelines=")
    guidelines, _ = json.JSONDecoder().raw_decode(text, start)
    return guidelines


def test_markup_in_a_guideline_stays_text_in_the_report(
    campaign_copy: Path, edit_config: Callable[[Callable[[dict[str, Any]], None]], None]
) -> None:
    plain_html = report(campaign_copy, "plain.html")
    edit_config(lambda config: config.update(guidelines=["GL4", MARKED]))
    snakemake(campaign_copy, "--profile", "profiles/local", "--cores", "2")
    html = report(campaign_copy, "marked.html")
    plain, marked = read_page(plain_html), read_page(html)

    assert handlers(plain) == handlers(marked) == []
    assert scripts(marked) == scripts(plain)
    # not one tag of the config's is in the report as written, nor its bare `&`
    for markup in ("<script>", "</script>", "<b onmouseover", "</b>", "& co"):
        assert html.count(markup) == plain_html.count(markup), markup
    # the report shows the guideline as the campaign file wrote it
    assert shown_guidelines(html) == ["GL4", MARKED]
