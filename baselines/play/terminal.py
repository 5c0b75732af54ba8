"""Play a game in the terminal: against an agent, or watch two agents.

    python -m polarzoo.baselines.play --env fire_and_ice_v0 --human fire --opponent heuristic
    python -m polarzoo.baselines.play --env go_with_the_floe_v0 --human white --opponent pretrained
    python -m polarzoo.baselines.play --env thin_ice_v0 --human player_0 --opponent random --players 3
    python -m polarzoo.baselines.play --env thin_ice_v0 --human player_0 --players 6 \
        --opponent pretrained vsearch:4 heuristic heuristic random     # one agent per other seat
    python -m polarzoo.baselines.play --env fire_and_ice_v0 --seed 0      # random vs random, printed

``polarzoo-play`` is the same command (a console script installed with the package).

The board is printed after every move.  On your turn type a move in the game's notation:

* Fire & Ice: ``D4-A4`` (from-to), ``pass`` when nothing can move;
* Go with the Floe: ``B2-C3`` (step or slide), ``G2xF3`` (capture), ``pass``;
* Thin Ice: ``call SM``, ``place M c2 upright`` (size, grid cell, orientation: upright, inverted,
  lying+x, lying-x, lying+y, lying-y), ``pickup 3`` (slot), ``done``.

Commands: ``moves`` (one line ``legal: ...`` with every legal move; at a terminal, a list of more
than 60 is grouped by kind of move instead), ``hint`` (the opponent
agent's choice in your place), ``undo`` (take back your last move and the replies to it),
``help``, ``quit``.  Anything else gets a one-line message and the prompt again.  Input may be
piped from a file.  ``--window``: Fire & Ice and Go with the Floe are played in a pygame window
instead (click a piece, then its destination; see :mod:`polarzoo.baselines.play.window`);
Thin Ice shows the MuJoCo picture in a window after every move while you type.
"""

from __future__ import annotations

import argparse
import copy
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

import numpy as np

from polarzoo.baselines.agents import make_agent
from polarzoo.baselines.cli.runs import HelpFormatter, add_trust_pickles, apply_trust_pickles, prog_name
from polarzoo.baselines.cli.runs import seed as seed_type
from polarzoo.baselines.play.turns import next_live_agent, outcome_line, play_to_the_end  # noqa: F401 (also public here)
from polarzoo.baselines.play.web import add_arguments as add_web_arguments
from polarzoo.baselines.play.web import serve
from polarzoo.baselines.play.window import WindowGame
from polarzoo.envs import ENVIRONMENTS, GAMES, table_kwargs

HELP = (
    "type a move ({example}), or: moves (list the legal moves), hint (a suggestion), undo (take back your last move), help, quit"
)


class Quit(Exception):
    pass


def play(env_id: str, seed: int, quiet: bool = False) -> dict[str, float]:
    """Play one game with uniformly random legal actions; return each agent's total reward."""
    env = ENVIRONMENTS[env_id].env(render_mode="ansi")
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    totals = {agent: 0.0 for agent in env.possible_agents}
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        totals[agent] += reward
        if termination or truncation:
            env.step(None)
            continue
        action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
        if not quiet:
            print(f"{agent} plays {env.unwrapped.action_to_notation(action)}")
        env.step(action)
    if not quiet:
        print(env.unwrapped.render_text())
        print("rewards:", totals)
    env.close()
    return totals


_CELL = re.compile(r"^[a-z][0-9]+$")


def format_moves(notations: list[str], limit: int = 60) -> str:
    """``legal: D4-A4 D4-B4 ...`` on one line; beyond ``limit`` moves (Thin Ice has hundreds)
    one line per kind of move with its cells (``place M upright: any of the 49 cells``)."""
    if len(notations) <= limit:
        return "legal: " + " ".join(notations)
    groups: dict[tuple[str, ...], list[str]] = {}
    singles: list[str] = []
    for text in notations:
        words = text.split()
        cells = [w for w in words if _CELL.match(w)]
        if len(cells) == 1:
            groups.setdefault(tuple(w if w != cells[0] else "*" for w in words), []).append(cells[0])
        else:
            singles.append(text)
    every = max((len(c) for c in groups.values()), default=0)
    lines = [f"legal ({len(notations)} moves):"]
    if singles:
        lines.append("  " + " ".join(singles))
    for key, cells in groups.items():
        where = f"any of the {every} cells" if len(cells) == every else " ".join(cells)
        lines.append(f"  {' '.join(key).replace(' *', '')}: {where}")
    return "\n".join(lines)


class HumanGame:
    """The terminal loop (see the module docstring).  ``read`` returns the next input line or
    ``None`` at the end of input; ``write`` prints one line."""

    def __init__(
        self,
        env_id: str,
        human: str,
        opponent_spec: str | Sequence[str],
        seed: int,
        env_kwargs: dict[str, Any],
        read: Callable[[str], str | None],
        write: Callable[[str], None],
        window: bool = False,
        group_moves: bool = False,
    ) -> None:
        self.group_moves = group_moves

        self.env_id = env_id
        self.example = "e.g. " + GAMES[env_id].notation_example if GAMES[env_id].notation_example else "in the game's notation"
        self.env = ENVIRONMENTS[env_id].raw_env(render_mode="ansi", **env_kwargs)
        self.env.reset(seed=seed)
        if human not in self.env.possible_agents:
            raise ValueError(f"--human must be one of {self.env.possible_agents}, got {human!r}")
        self.human = human
        # One spec for every other seat, or one per other seat in seat order (a table of 3-6).
        specs = [opponent_spec] if isinstance(opponent_spec, str) else list(opponent_spec)
        others = [seat for seat in self.env.possible_agents if seat != human]
        if len(specs) not in (1, len(others)):
            raise ValueError(
                f"give one opponent for every other seat, or one for each of the {len(others)} ({', '.join(others)}), got {len(specs)}"
            )
        made: dict[str, Any] = {}  # a spec named twice is one agent
        for spec in specs:
            if spec not in made:
                made[spec] = make_agent(spec, env_id)
        self.opponents = {seat: made[spec] for seat, spec in zip(others, specs * len(others))}
        self.opponent = self.opponents[others[0]]  # the hints' helper
        self.rng = np.random.default_rng(seed)
        self.read, self.write = read, write
        self.history: list[dict[str, Any]] = []  # snapshots before each of the human's moves
        self.window = _Window(env_id) if window else None

    def legal(self) -> dict[str, int]:
        env = self.env
        return {env.action_to_notation(int(a)).lower(): int(a) for a in np.flatnonzero(env.legal_action_mask())}

    def show(self) -> None:
        self.write(self.env.render())
        if self.window is not None:
            self.window.show(self.env)

    def run(self) -> int:
        names = list(dict.fromkeys(agent.name for agent in self.opponents.values()))
        self.write(f"You play {self.human} against {', '.join(names)}. {HELP.format(example=self.example)}")
        self.show()
        try:
            totals = play_to_the_end(self.env, self.human, self._human_move, self._agent_move, after_step=self.show)
        except Quit:
            self.write("quit: game abandoned")
            return 0
        self.write(outcome_line(self.env, totals))
        return 0

    def _human_move(self) -> int | None:
        action = self.ask()
        if action is None:  # undo: the position changed, show it and ask again
            self.show()
        return action

    def _agent_move(self, agent: str) -> int:
        action = int(self.opponents[agent].act(self.env, agent, self.rng))
        self.write(f"{agent} plays {self.env.action_to_notation(action)}")
        return action

    def ask(self) -> int | None:
        env = self.env
        while True:
            line = self.read(f"{self.human}> ")
            if line is None:
                raise Quit
            text = line.strip()
            command = text.lower()
            if not text:
                continue
            if command in ("quit", "exit", "q"):
                raise Quit
            if command in ("help", "?"):
                self.write(HELP.format(example=self.example))
                continue
            if command == "moves":
                notations = [env.action_to_notation(a) for a in self.legal().values()]
                self.write(format_moves(notations) if self.group_moves else "legal: " + " ".join(notations))
                continue
            if command == "hint":
                self.write(f"thinking ({self.opponent.name})...")
                suggestion = int(self.opponent.act(copy.deepcopy(env), self.human, np.random.default_rng(0)))
                self.write(f"hint ({self.opponent.name}): {env.action_to_notation(suggestion)}")
                continue
            if command == "undo":
                if not self.history:
                    self.write("nothing to undo: you have not moved yet")
                    continue
                self.env.restore(self.history.pop())
                self.write("undone: your last move and the replies to it")
                return None
            legal = self.legal()
            key = " ".join(command.split())
            if key in legal:
                self.history.append(env.snapshot())
                return legal[key]
            self.write(self.why_not(text))

    def why_not(self, text: str) -> str:
        try:
            action = self.env.notation_to_action(text)
        except ValueError as error:
            return f"{error} (type moves for the legal ones, help for commands)"
        if 0 <= action < self.env.num_actions:
            return f"illegal: {self.env.explain_illegal(action)} (type moves for the legal ones)"
        return f"{text!r} is not a move here (type moves for the legal ones)"


class _Window:
    """Shows the env's ``rgb_array`` picture after every move (pygame)."""

    def __init__(self, env_id: str) -> None:
        from polarzoo.envs.utils import HumanWindow

        self.window_class = HumanWindow
        self.window: Any = None
        self.name = env_id

    def show(self, env: Any) -> None:
        frame = env.render_picture()
        if self.window is None:
            self.window = self.window_class(self.name, frame.shape[1], frame.shape[0])
        self.window.show(frame, 1000)


def _stdin_reader(stream: TextIO, echo: bool) -> Callable[[str], str | None]:
    def read(prompt: str) -> str | None:
        if stream.isatty():
            try:
                return input(prompt)
            except EOFError:
                return None
        sys.stdout.write(prompt)
        line = stream.readline()
        if not line:
            sys.stdout.write("\n")
            return None
        if echo:
            sys.stdout.write(line if line.endswith("\n") else line + "\n")
        return line.rstrip("\n")

    return read


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog=prog_name("polarzoo.baselines.play"), description=__doc__, formatter_class=HelpFormatter
    )
    parser.add_argument("--env", default=next(iter(GAMES)), choices=sorted(GAMES), help="environment id")
    parser.add_argument("--seed", type=seed_type, default=0, help="seed for the env and the agents")
    parser.add_argument(
        "--human",
        default=None,
        help="the seat you play (e.g. fire, ice, black, white, player_0); without it two random agents play",
    )
    parser.add_argument(
        "--opponent",
        nargs="+",
        default=["heuristic"],
        help="agent spec for the other seats (one for all, or one per other seat in seat order at a table of 3-6): random, heuristic, mcts:N, model:PATH, pretrained, az:N, az-jax:PATH, search:K, vsearch:K (Thin Ice), search:D (Go with the Floe) "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--players", type=int, default=None, help="the table size, for a game with a range (Thin Ice: 2..6; default: 2)"
    )
    parser.add_argument("--window", action="store_true", help="also show the position in a window after every move")
    parser.add_argument(
        "--web",
        action="store_true",
        help="play in the browser instead: start the local web server "
        "(polarzoo-web; --env and --opponent preselected on its page)",
    )
    add_web_arguments(parser)
    add_trust_pickles(parser)
    args = parser.parse_args(argv)
    apply_trust_pickles(args)
    if args.web:
        serve(args.host, args.port, {"env": args.env, "opponent": args.opponent[0]})
        return
    if args.window:
        from polarzoo.envs.utils import no_display_reason

        reason = no_display_reason()
        if reason:
            sys.exit(
                f"error: --window needs a display: {reason} (play in the terminal without --window, or in the browser with --web)"
            )
    info = GAMES[args.env]
    try:
        env_kwargs = table_kwargs(args.env, args.players)
    except ValueError as error:
        parser.error(f"--{error}")
    if args.human is None:
        play(args.env, args.seed)
        return
    seats = ENVIRONMENTS[args.env].raw_env(**env_kwargs).possible_agents
    if args.human not in seats:
        parser.error(f"--human must be one of {', '.join(seats)} for {args.env}, got {args.human!r}")
    if len(args.opponent) not in (1, len(seats) - 1):
        parser.error(
            f"--opponent: give one agent for every other seat, or one for each of the {len(seats) - 1}, got {len(args.opponent)}"
        )
    for spec in args.opponent:
        try:
            make_agent(spec, args.env)
        except (ValueError, FileNotFoundError, ImportError) as error:
            parser.error(f"--opponent {spec}: {error}")
        except Exception as error:  # a corrupt model file: name it, not the library's internals
            parser.error(f"--opponent {spec}: cannot load it ({type(error).__name__}: {error})")
    if args.window and info.window:
        try:
            print(WindowGame(args.env, args.human, args.opponent[0], args.seed).run())
        except KeyboardInterrupt:
            print("\ninterrupted: game abandoned")
            sys.exit(130)
        return
    # A person at a terminal gets long move lists grouped; a script reading a pipe, the one
    # ``legal: ...`` line it can parse.
    game = HumanGame(
        args.env,
        args.human,
        args.opponent,
        args.seed,
        env_kwargs,
        group_moves=sys.stdin.isatty(),
        read=_stdin_reader(sys.stdin, echo=not sys.stdin.isatty()),
        write=print,
        window=args.window,
    )
    try:
        sys.exit(game.run())
    except KeyboardInterrupt:
        print("\ninterrupted: game abandoned")
        sys.exit(130)


if __name__ == "__main__":
    main()
