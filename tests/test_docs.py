"""The documentation site: built with warnings as errors, then opened in a real headless browser.

The build is README's command (``python -m sphinx -W --keep-going -b html docs OUT``); every env
page must show its title, its spaces table and its picture (loaded), every page must load with no
console errors, and every link between the site's pages must lead to a page that exists.  The
browser is Debian's Chromium (``/usr/bin/chromium``, which ``.ci/run`` installs) driven by
Playwright; without either the browser test is skipped with the reason.
"""

from __future__ import annotations

import functools
import http.server
import shutil
import subprocess
import sys
import threading
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlparse

import pytest

from tests.helpers import scaled  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ENV_PAGES = {
    "fire_and_ice_v0": "Fire & Ice",
    "fire_and_ice_solitaire_v0": "Fire & Ice Solitaire",
    "go_with_the_floe_v0": "Go with the Floe",
    "thin_ice_v0": "Thin Ice",
}

#: env pages with a recorded game in the replay viewer (docs/replays)
REPLAY_PAGES = ("fire_and_ice_v0", "go_with_the_floe_v0", "thin_ice_v0")

#: paths the browser asked for that the site does not have
MISSING: list[str] = []

pytest.importorskip("sphinx", reason='the docs extra: pip install "polarzoo[docs]"')
pytest.importorskip("myst_parser", reason='the docs extra: pip install "polarzoo[docs]"')


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    build = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", "docs", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=scaled(600),
    )
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    return out


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value and ((tag == "a" and name == "href") or (tag == "img" and name == "src")):
                self.links.append(value)


@pytest.mark.slow  # builds the site (.ci/run builds it too)
def test_the_site_builds_with_every_page_and_no_broken_internal_link(site: Path) -> None:
    for page in [
        "index",
        "getting_started",
        "training",
        "results",
        "integrations",
        "jax",
        "openspiel",
        "api",
        "layout",
        "rules/thin_ice",
        "cli/train",
        "cli/evaluate",
        "cli/play",
        *(f"envs/{name}" for name in ENV_PAGES),
    ]:
        assert (site / f"{page}.html").is_file(), page
    broken = []
    for html in site.rglob("*.html"):
        parser = _Links()
        parser.feed(html.read_text())
        for link in parser.links:
            parsed = urlparse(link)
            if parsed.scheme or link.startswith("#") or link.startswith("mailto:"):
                continue
            target = (html.parent / parsed.path).resolve()
            if not target.exists():
                broken.append(f"{html.relative_to(site)} -> {link}")
    assert not broken, "\n".join(broken[:20])
    # the CLI pages are the parsers' own --help
    assert "--total-timesteps" in (site / "cli" / "train.html").read_text()


@pytest.fixture(scope="module")
def served(site: Path):  # type: ignore[no-untyped-def]
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
            if len(args) > 1 and str(args[1]) == "404":
                MISSING.append(self.path)

    handler = functools.partial(Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium (Debian: apt-get install chromium; .ci/run installs it)")
@pytest.mark.slow  # builds the site (.ci/run builds it too)
def test_env_pages_in_a_headless_browser(served: str) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason='Playwright: pip install "polarzoo[docs]"')
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ]
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=flags)
        page = browser.new_page()
        errors: list[str] = []
        page.on("console", lambda message: errors.append(f"{page.url}: {message.text}") if message.type == "error" else None)
        page.on("pageerror", lambda error: errors.append(f"{page.url}: {error}"))
        for name, title in ENV_PAGES.items():
            response = page.goto(urljoin(served, f"envs/{name}.html"))
            assert response is not None and response.ok, name
            assert page.locator("h1").first.inner_text().strip().rstrip("#").strip() == title
            # the spaces table: the docstring's first table, with the action and observation rows
            table = page.locator("table").first.inner_text()
            assert "Action" in table and "Observation" in table, (name, table[:300])
            picture = page.locator("article img").first
            assert picture.is_visible(), name
            loaded = picture.evaluate("img => img.complete && img.naturalWidth > 0")
            assert loaded, f"{name}: its picture did not load"
            if name in REPLAY_PAGES:  # the recorded game plays in the page from static files alone
                viewer = page.locator(".polarzoo-replay[data-mounted]")
                viewer.wait_for()
                assert viewer.get_attribute("data-ply") == "0"
                for _ in range(3):
                    page.click(".polarzoo-replay .replay-forward")
                assert viewer.get_attribute("data-ply") == "3", name
                assert page.locator(".polarzoo-replay .replay-board svg, .polarzoo-replay .replay-board img").count() == 1
                page.click(".polarzoo-replay .replay-last")
                assert page.locator(".polarzoo-replay .result").inner_text().strip(), name
        for other in ("index.html", "getting_started.html", "results.html", "api.html", "cli/train.html"):
            response = page.goto(urljoin(served, other))
            assert response is not None and response.ok, other
        browser.close()
    assert not errors, "\n".join(errors) + f"\nmissing: {MISSING}"


def test_the_readmes_example_runs_as_written() -> None:
    """README's example (``pettingzoo.make("aec", "polarzoo/...")``) plays a game to its end."""
    import re

    from tests.helpers import scaled

    readme = (ROOT / "README.md").read_text()
    code = re.search(r"## Example\n\n```python\n(.*?)```", readme, re.S)
    assert code is not None and 'pettingzoo.make("aec", "polarzoo/' in code.group(1)
    result = subprocess.run([sys.executable, "-c", code.group(1)], capture_output=True, text=True, timeout=scaled(300), cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "'winner'" in result.stdout


@pytest.mark.parametrize(
    "module",
    [
        "polarzoo",
        "polarzoo.envs.game_info",
        "polarzoo.envs.utils",
        "polarzoo.envs.fire_and_ice.env",
        "polarzoo.envs.go_with_the_floe.env",
        "polarzoo.baselines.kits",
    ],
)
def test_the_docstring_examples_run(module: str) -> None:
    """Every ``>>>`` example of the package's docstrings gives what it says (the Floe's action
    145 once read B2-C3: it is B2-B4)."""
    import doctest
    import importlib

    found = subprocess.run(
        ["git", "grep", "-l", ">>> ", "--", "envs", "wrappers", "baselines", "polarzoo"], cwd=ROOT, capture_output=True, text=True
    )
    if found.returncode == 0:  # a new module with examples must join the list above
        assert len(found.stdout.split()) == 6, found.stdout
    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0


def layout_sections(page: str) -> dict[str, str]:
    """The layout block of docs/layout.md by folder (``envs/``, ``envs/_common/``, ...): each
    folder's lines, from its header to the next folder's."""
    import re

    block = re.search(r"```\n(polarzoo/.*?)```", page, re.S)
    assert block is not None, "docs/layout.md has no layout block"
    sections: dict[str, str] = {}
    top = current = ""
    for line in block.group(1).splitlines():
        header = re.match(r"^( {0,2})([\w.]+/)\s", line + " ")
        if header and not line.startswith("   "):
            top, current = (header.group(2), header.group(2)) if not header.group(1) else (top, top + header.group(2))
            sections.setdefault(current, "")
        if current:
            sections[current] += line + "\n"
    return sections


def unnamed_modules(page: str, root: Path) -> list[str]:
    """The modules of envs/, wrappers/ and baselines/ that the layout's section of their folder
    does not name."""
    sections = layout_sections(page)
    missing = []
    for folder in ("envs", "wrappers", "baselines"):
        for path in sorted((root / folder).rglob("*.py")):
            relative = path.relative_to(root)
            folder_key = "/".join(relative.parts[:-1]) + "/"
            if path.name != "__init__.py" and path.name not in sections.get(folder_key, ""):
                missing.append(str(relative))
    return missing


def test_the_layout_page_names_every_module() -> None:
    root = Path(__file__).resolve().parents[1]
    page = (root / "docs" / "layout.md").read_text()
    assert unnamed_modules(page, root) == []
    assert unnamed_modules(page.replace("oracle.py", "oracle"), root) == ["baselines/agents/oracle.py"]


def test_the_results_records_stay_within_their_budget() -> None:
    """docs/results/ keeps small summaries (<= 150 files, <= 5 MB; a study is one archive or the
    command that rebuilds it), never a model (they ship in baselines/pretrained/ or nowhere), and
    the results page stays a page (<= 300 lines)."""
    root = Path(__file__).resolve().parents[1]
    listed = subprocess.run(["git", "ls-files", "docs/results"], cwd=root, capture_output=True, text=True)
    if listed.returncode == 0 and listed.stdout:
        files = [root / name for name in listed.stdout.split()]
    else:  # not a git checkout: what is on disk
        files = [path for path in (root / "docs" / "results").rglob("*") if path.is_file()]
    assert len(files) <= 150, f"docs/results/ has {len(files)} files"
    assert sum(path.stat().st_size for path in files) <= 5_000_000
    models = [str(path.relative_to(root)) for path in files if path.suffix in (".safetensors", ".zip", ".npz", ".pt", ".pkl")]
    assert models == []
    assert len((root / "docs" / "results.md").read_text().splitlines()) <= 300


def test_the_league_page_lists_a_best_response_beside_a_member_only_on_its_current_model() -> None:
    """A best response measured on files the member no longer plays (an earlier ``pretrained``)
    leaves the member's table and is marked "an earlier model" in the full one."""
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    try:
        import polarzoo_pages
    finally:
        sys.path.remove(str(ROOT / "docs" / "_ext"))
    from polarzoo.baselines.evaluation.league import models_digest

    seat = {"wins": 6, "games": 10, "win_rate": 0.6, "win_rate_ci95": [0.3, 0.8], "first_place": 0.6}
    result = {
        "env": "fire_and_ice_v0",
        "agent": "pretrained",
        "seed": 0,
        "timesteps": 1_000,
        "init": None,
        "games_per_seat": 10,
        "by_seat": {"fire": seat, "ice": seat},
        "overall": {**seat, "wins": 12, "games": 20},
    }
    current = {**result, "model_digest": models_digest("pretrained", "fire_and_ice_v0")}
    earlier = {**result, "model_digest": "0" * 16}
    rows = polarzoo_pages.members_exploitability("fire_and_ice_v0", ["pretrained"], [current, earlier])
    assert sum(line.startswith("| `pretrained` |") for line in rows) == 1
    assert polarzoo_pages.current_models(earlier) is False and polarzoo_pages.current_models(current) is True
    assert polarzoo_pages.current_models({**result, "agent": "model:/nowhere/model.zip"}) is None
