"""Sphinx extension: the pages written from the code, so that the code stays their one source.

* ``envs/<id>.md``: each environment's page is its module docstring (the PettingZoo-style
  table of agents, spaces and rewards, the encodings, variants and arguments), with its picture
  under the title; doctest lines (``>>>``) become code blocks.
* ``cli/<name>.md``: each command-line tool's ``--help``, printed by its own argparse parser.
* ``_static/polarzoo/``: the web app's replay viewer (``replay.js``, ``style.css``, from
  ``baselines/play/web_static``) and each recorded game of ``docs/replays`` wrapped in a script,
  so an env page plays its game with no server (also from a ``file://`` copy of the site).

They are written when the build starts (``builder-inited``) into the source folder; ``.gitignore``
keeps them out of the repository.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import re
from pathlib import Path
from typing import Any

from polarzoo.baselines.play.replay import replay_script

#: page name -> (module whose docstring is the page, picture in docs/, its caption)
ENV_PAGES: dict[str, tuple[str, str, str]] = {
    "fire_and_ice_v0": ("polarzoo.envs.fire_and_ice.env", "fire_and_ice.png", "A Fire & Ice game after 20 plies (rgb_array)."),
    "fire_and_ice_solitaire_v0": (
        "polarzoo.envs.fire_and_ice.solitaire_env",
        "fire_and_ice_solitaire.png",
        "A Fire & Ice Solitaire deal after 10 captures of its exact solution (rgb_array).",
    ),
    "go_with_the_floe_v0": (
        "polarzoo.envs.go_with_the_floe.env",
        "go_with_the_floe.png",
        "A Go with the Floe game after 12 plies (rgb_array).",
    ),
    "thin_ice_v0": (
        "polarzoo.envs.thin_ice.env",
        "thin_ice.png",
        "A 3-player Thin Ice game after 19 actions (rgb_array): each pile on its table with the 7x7 placement "
        "lattice; yellow S, orange M, red L; the green bar marks whose turn it is, an eliminated pile is darkened in a red frame.",
    ),
}

#: page name -> the module whose ``main(["--help"])`` prints it
CLI_PAGES: dict[str, str] = {
    "train": "polarzoo.baselines.train",
    "evaluate": "polarzoo.baselines.evaluate",
    "play": "polarzoo.baselines.play",
    "web": "polarzoo.baselines.play.web",
    "replay": "polarzoo.baselines.play.replay",
    "export": "polarzoo.baselines.export",
    "solitaire_solver": "polarzoo.baselines.solitaire_solver",
    "solitaire_train": "polarzoo.baselines.solitaire_train",
    "solitaire_eval": "polarzoo.baselines.solitaire_eval",
    "rllib_train": "polarzoo.baselines.rllib_train",
    "alphazero_jax": "polarzoo.baselines.alphazero_jax",
    "league": "polarzoo.baselines.league",
    "benchmark": "polarzoo.baselines.benchmark",
    "exploit": "polarzoo.baselines.training.exploit",
    "perfect_play": "polarzoo.baselines.evaluation.perfect_play",
}

#: the games whose shipped league (baselines/leagues/<env>.json) the ladder page shows
LEAGUE_GAMES = ("fire_and_ice_v0", "go_with_the_floe_v0", "thin_ice_v0")


def league_page(source_dir: Path) -> str:
    """The ladder page: each shipped league's table (from its file) and plot (committed beside
    its games in docs/results/league/<env>/)."""
    from polarzoo.baselines.evaluation.league import ladder_markdown, league_path, load_league

    parts = [
        "# The league",
        "",
        "A frozen, versioned set of reference agents per game, rated on one Elo-like scale (members' mean 1500; "
        "400 points = 10:1 odds) by a round robin of seeded games: a Bradley-Terry / Plackett-Luce model fitted "
        "with [choix](https://github.com/lucasmaystre/choix), 95% intervals by a stratified bootstrap over the "
        "games.  Rate your own agent against it with `python -m polarzoo.baselines.league rate --env ENV --agent "
        "SPEC` ([benchmark.md](benchmark.md) says how, and how long).",
        "",
    ]
    for env_id in LEAGUE_GAMES:
        parts += [f"## `{env_id}`", ""]
        if not league_path(env_id).exists():
            parts += ["No league is shipped for this game yet.", ""]
            continue
        league = load_league(env_id, check=False)
        parts += [
            ladder_markdown(league),
            "",
            f"Built with `{league.protocol.get('command', '?')}`; its games are in `docs/results/league/{env_id}/games.jsonl.gz`.",
            "",
        ]
        if (source_dir / "results" / "league" / env_id / "ladder.png").exists():
            parts += [f"```{{image}} results/league/{env_id}/ladder.png", f":alt: the {env_id} ladder", ":width: 80%", "```", ""]
        parts += members_exploitability(env_id, list(league.specs), exploit_results(source_dir))
        parts += variant_leagues(source_dir, env_id)
    parts += exploit_section(source_dir)
    return "\n".join(parts)


def variant_leagues(source_dir: Path, env_id: str) -> list[str]:
    """The game's leagues of other env arguments (``docs/results/league/<env>-<variant>/``, built
    with ``league build --env-kwargs``; rated against with ``league rate --league``)."""
    from polarzoo.baselines.evaluation.league import ladder_markdown, load_league

    parts: list[str] = []
    for folder in sorted((source_dir / "results" / "league").glob(f"{env_id}-*")):
        if not (folder / "league.json").exists():
            continue
        league = load_league(str(folder / "league.json"), check=False)
        rel = folder.relative_to(source_dir)
        parts += [
            f"### `{env_id}` with `{json.dumps(league.protocol.get('env_kwargs', {}))}`",
            "",
            ladder_markdown(league),
            "",
            f"Built with `{league.protocol.get('command', '?')}`; its games are in `docs/{rel}/games.jsonl.gz`; rate an agent "
            f"against it with `python -m polarzoo.baselines.league rate --env {env_id} --league docs/{rel}/league.json --agent SPEC`.",
            "",
        ]
    return parts


def exploit_results(source_dir: Path) -> list[dict]:
    """Every best response's result in the study's archive (``exploit/*/exploit.json``), by name."""
    import json
    import tarfile

    archive = source_dir / "results" / "exploit.tar.gz"
    if not archive.exists():
        return []
    with tarfile.open(archive) as members:  # our own archive, read as data: no member is extracted
        return [
            json.loads(members.extractfile(member).read())  # type: ignore[union-attr]
            for member in sorted(members.getmembers(), key=lambda m: m.name)
            if member.isfile() and member.name.count("/") == 2 and member.name.endswith("/exploit.json")
        ]


def current_models(result: dict) -> bool | None:
    """Whether a result was measured on the model files its agent plays from today (its
    ``model_digest``; a result from before the field: none, so only an agent without model files
    matches); ``None`` where the agent's files cannot be found here (a run folder's model)."""
    from polarzoo.baselines.evaluation.league import LeagueError, models_digest

    try:
        return result.get("model_digest", "") == models_digest(result["agent"], result["env"])
    except (LeagueError, OSError, ValueError):
        return None


def members_exploitability(env_id: str, specs: list[str], found: list[dict]) -> list[str]:
    """A league's members beside what a best response took from them (the archive's results for
    that agent, measured on its current model files: each one's budget and start, both seats
    pooled)."""
    rows = []
    for spec in specs:
        for result in found:
            if result["env"] != env_id or result["agent"] != spec or len(result["by_seat"]) != 2:
                continue
            if not current_models(result):
                continue
            total = result["overall"]
            compute = result.get("compute") or {}
            share = f" ({compute['fraction_of_agent']:.0%} of its training)" if compute.get("fraction_of_agent") else ""
            seeds = len(result.get("seeds") or [result.get("seed")])
            start = f"`{result['init']}`" if result.get("init") else "the config's start"
            seats = " / ".join(f"{row['win_rate']:.0%}" for row in result["by_seat"].values())
            rows.append(
                f"| `{spec}` | {result['timesteps']:,}{share}, from {start}, {seeds} seed{'s' if seeds > 1 else ''} | "
                f"{seats} | {total['win_rate']:.0%} [{total['win_rate_ci95'][0]:.0%}, {total['win_rate_ci95'][1]:.0%}] |"
            )
    if not rows:
        return []
    return [
        "Exploitability of its members (a best response's wins against it; the section below):",
        "",
        "| member | best response's timesteps | its wins as first / second seat | both seats [95% CI] |",
        "|---|---|---|---|",
        *rows,
        "",
    ]


def exploit_section(source_dir: Path) -> list[str]:
    """How much a trained best response takes from each agent (``exploit/*/exploit.json`` in the
    study's archive, ``docs/results/exploit.tar.gz``)."""
    found = exploit_results(source_dir)
    if not found:
        return []
    parts = [
        "## Exploitability (approximate best responses)",
        "",
        "A best response is MaskablePPO trained against one frozen agent alone (`polarzoo-league exploit`, "
        "`python -m polarzoo.baselines.training.exploit --help`), then played against it, games per seat, each game opened by the kit's random plies "
        "(`Kit.opening_plies`); its win "
        "rate is a lower bound on what a determined opponent can take (a longer or better training may take more).",
        "",
        "| game | agent | best response's training | win rate as first seat | as second seat | best response's league rating |",
        "|---|---|---|---|---|---|",
    ]
    tables: list[str] = []  # several seeds pooled, or a table of 3+ players: a table of their own
    for result in found:
        if "per_seed" in result or len(result["by_seat"]) > 2:
            tables.append(pooled_row(result))
            continue
        seats = list(result["by_seat"].values())
        cells = [
            f"{s['wins']}/{s['games']} ({s['win_rate']:.0%} [{s['win_rate_ci95'][0]:.0%}, {s['win_rate_ci95'][1]:.0%}])"
            for s in seats
        ]
        start = f", from `{result['init']}`" if result.get("init") else ", from the config's start"
        start += f"; {result['games_per_seat']} games a seat"
        start += f", {result['distinct_games']} distinct" if "distinct_games" in result else ""
        rating = result.get("rating")
        earlier = " (an earlier model)" if current_models(result) is False else ""
        rated = (
            f"{rating['rating']:.0f} [{rating['ci95'][0]:.0f}, {rating['ci95'][1]:.0f}] "
            f"(league v{rating.get('league_version', '?')}; the agent: {rating['target_rating']})"
            if rating
            else "-"
        )
        parts.append(
            f"| `{result['env']}` | `{result['agent']}`{earlier} | {result['timesteps']:,} timesteps{start}, seed {result['seed']} | "
            f"{cells[0]} | {cells[1]} | {rated} |"
        )
    if tables:
        parts += [
            "",
            "Several best-response seeds pooled (`--seeds`), and tables of more than two players (`--players N`: the best "
            "response in one seat, the agent in every other; first places with ties split, against chance, 1/N):",
            "",
            "| game | agent | best responses' training | their wins, every seat pooled | first places (chance) |",
            "|---|---|---|---|---|",
            *tables,
        ]
    parts += [
        "",
        "Each row: `python -m polarzoo.baselines.training.exploit --env ENV --agent AGENT --timesteps T --games G "
        "--rate-games R --torch-threads 1` (`--init pretrained` where the row says so) with the row's numbers (G games "
        "a seat; R: 200, 100 for Thin Ice's `pretrained` and `heuristic` and for `az:20`, the default 400 for the "
        "others); the runs are in `docs/results/exploit.tar.gz`.",
        "",
    ]
    return parts


def pooled_row(result: dict) -> str:
    """One row of the pooled / many-player exploit table."""
    from polarzoo.baselines.training.exploit import plies

    total = result["overall"]
    seeds = result.get("seeds") or [result.get("seed")]
    compute = result.get("compute") or {}
    share = f" ({compute['fraction_of_agent']:.0%} of the agent's own)" if compute.get("fraction_of_agent") else ""
    start = f", from `{result['init']}`" if result.get("init") else ", from the config's start"
    players = f", {len(result['by_seat'])} players" if len(result["by_seat"]) > 2 else ""
    if result.get("opening_plies") is not None:
        players += f", games opened by {plies(result['opening_plies'])}"
    first = f"{total['first_place']:.0%} ({total['chance']:.0%})" if "first_place" in total else "-"
    earlier = " (an earlier model)" if current_models(result) is False else ""
    return (
        f"| `{result['env']}` | `{result['agent']}`{earlier} | {result['timesteps']:,} timesteps{share}{start}{players}, "
        f"seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))} | {total['wins']}/{total['games']} "
        f"({total['win_rate']:.0%} [{total['win_rate_ci95'][0]:.0%}, {total['win_rate_ci95'][1]:.0%}]) | {first} |"
    )


def _fence_doctests(text: str) -> str:
    """``>>>`` lines and the output after them (to the next blank line) as a python code block."""
    out, block = [], []
    for line in text.splitlines():
        if line.startswith(">>>") or (block and line.strip()):
            block.append(line)
            continue
        if block:
            out += ["```python", *block, "```"]
            block = []
        out.append(line)
    if block:
        out += ["```python", *block, "```"]
    return "\n".join(out)


def env_page(module_name: str, picture: str, caption: str) -> str:
    """The page of one env: its module docstring, the picture under the title."""
    doc = importlib.import_module(module_name).__doc__ or ""
    lines = _fence_doctests(doc.strip("\n")).splitlines()
    title = next(i for i, line in enumerate(lines) if line.startswith("# "))
    # A link to the rules page in the repository becomes a link to the site's page.
    # PettingZoo's docstrings go from the title (#) to sections (###); a page wants (##).
    body = re.sub(r"(?m)^### ", "## ", "\n".join(lines[title + 1 :]))
    body = re.sub(r"the repository's\s+`docs/rules/(\w+)\.md`", r"[the rules page](../rules/\1.md)", body)
    figure = f"```{{figure}} ../{picture}\n:alt: {caption}\n:width: 100%\n\n{caption}\n```"
    source = f"*Generated from the docstring of `{module_name}`.*"
    name = module_name_to_env(module_name)
    watch = replay_section(name) if name in REPLAYS else ""
    return "\n".join([lines[title], "", figure, "", source, body, watch])


#: env pages with a recorded game (``docs/replays/<env>.json``)
REPLAYS = ("fire_and_ice_v0", "go_with_the_floe_v0", "thin_ice_v0")


def module_name_to_env(module_name: str) -> str:
    return next((name for name, (module, *_) in ENV_PAGES.items() if module == module_name), "")


def replay_section(env_id: str) -> str:
    """The page's "Watch a game" section: the recorded game in the replay viewer."""
    command = "polarzoo-web --replay runs/eval-.../games.jsonl"
    return (
        f"\n## Watch a game\n\nThe shipped agent (`pretrained`, first seat) against the heuristic, after two random "
        f"opening moves (`docs/replays/README.md` has the command).  Step with the buttons, the slider, the move "
        f"list or the arrow keys.  Any game an evaluation recorded plays the same way in the local web app "
        f"(`{command}`; `polarzoo-web` alone to play against an agent).\n\n"
        f'<link rel="stylesheet" href="../_static/polarzoo/style.css">\n'
        f'<div class="polarzoo-replay" data-replay="{env_id}"></div>\n'
        f'<script src="../_static/polarzoo/replay.js"></script>\n'
        f'<script src="../_static/polarzoo/replays/{env_id}.js"></script>\n'
    )


def copy_replays(source_dir: Path) -> None:
    """``_static/polarzoo``: replay.js, style.css and every replay as a script (see the module docstring)."""
    import shutil

    web = Path(importlib.import_module("polarzoo.baselines.play").__file__).parent / "web_static"
    target = source_dir / "_static" / "polarzoo"
    (target / "replays").mkdir(parents=True, exist_ok=True)
    for name in ("replay.js", "style.css"):
        _write(target / name, (web / name).read_text())
    for env_id in REPLAYS:
        data = (source_dir / "replays" / f"{env_id}.json").read_text()
        _write(target / "replays" / f"{env_id}.js", replay_script(env_id, data))
        pictures = source_dir / "replays" / env_id
        if pictures.is_dir():
            shutil.copytree(pictures, target / "replays" / env_id, dirs_exist_ok=True)


def cli_page(name: str, module_name: str) -> str:
    """The page of one CLI: its ``--help`` as its parser prints it (80 columns)."""
    module = importlib.import_module(module_name)
    buffer = io.StringIO()
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        with contextlib.redirect_stdout(buffer), contextlib.suppress(SystemExit):
            module.main(["--help"])
    finally:
        if previous is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = previous
    usage = buffer.getvalue().rstrip()
    return f"# `{name}`\n\n`python -m {module_name} --help` (the text its parser prints):\n\n```text\n{usage}\n```\n"


def _write(path: Path, text: str) -> None:
    # Rewrite only on change, so an incremental build does not reread every page.
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def generate(source_dir: Path) -> None:
    envs, cli = source_dir / "envs", source_dir / "cli"
    envs.mkdir(exist_ok=True)
    cli.mkdir(exist_ok=True)
    for name, (module_name, picture, caption) in ENV_PAGES.items():
        _write(envs / f"{name}.md", env_page(module_name, picture, caption))
    for name, module_name in CLI_PAGES.items():
        _write(cli / f"{name}.md", cli_page(name, module_name))
    _write(source_dir / "league.md", league_page(source_dir))
    copy_replays(source_dir)
    _write(
        cli / "index.md",
        "# Command-line tools\n\nEvery page is the tool's own `--help`.  Each is also an entry point "
        "(`polarzoo-train`, `polarzoo-evaluate`, ...; see `pyproject.toml`).\n\n"
        "```{toctree}\n:maxdepth: 1\n\n" + "\n".join(CLI_PAGES) + "\n```\n",
    )


def _on_builder_inited(app: Any) -> None:
    generate(Path(app.srcdir))


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", _on_builder_inited)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
