"""Hostile input, class by class (docs/security.md): every way from data to code or to a hang that
the trust boundary closes, with payloads of its own.  A payload that would run code writes a
marker file; the test checks that the marker never appears and that the refusal is one line.

- nested specs in league files and run folders (``oracle:proc:...``, ``oracle:module:Agent``);
- one spec grammar: a property test over generated nested specs and every entry point's rule;
- training checkpoints: no pickle (a crafted exact-resume state names ``os.system``; a legacy
  pickle is never unpickled without ``--trust-pickles``);
- agent processes: escaping children (``setsid``, double fork), shared memory past the cap, a
  fork bomb, an endless file, a stderr flood, a silent reader, the private folder;
- endless and giant files: ``model:/dev/zero`` in a league, a FIFO, a small model file whose
  header names a huge network;
- deep and long JSON: agent replies, web bodies, replay lines, league files, MCP moves.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from polarzoo.baselines.agents import RandomAgent
from polarzoo.baselines.agents.process import AgentForfeit, ProcessAgent
from polarzoo.baselines.agents.registry import names_code_or_file
from polarzoo.baselines.agents.spec import SpecError, Trust, parse_spec
from polarzoo.baselines.evaluation.tournament import play_game
from polarzoo.baselines.play.web_game import page_agent_problem
from polarzoo.envs.utils import DataError, loads_json
from tests.helpers import scaled

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
ENV = "fire_and_ice_v0"


def cli(
    *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, "-m", *args],
        capture_output=True,
        text=True,
        timeout=scaled(timeout),
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


def one_line(result: subprocess.CompletedProcess[str], words: str) -> None:
    assert result.returncode != 0, result.stdout[-500:]
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert words in result.stderr, result.stderr[-2000:]


def marker_module(tmp_path: Path) -> Path:
    """A module whose import (and whose agent) writes ``ran.txt``: the proof that code ran."""
    (tmp_path / "payload.py").write_text(
        textwrap.dedent(
            f"""
            open({str(tmp_path / "ran.txt")!r}, "a").write("imported\\n")

            class Agent:
                name = "payload"

                def act(self, env, agent, rng):
                    import numpy as np
                    return int(np.flatnonzero(env.legal_action_mask())[0])
            """
        )
    )
    return tmp_path / "ran.txt"


def forged_league(tmp_path: Path, specs: list[str]) -> Path:
    from tests.helpers import forged_league as forge

    return forge(tmp_path, ENV, specs)


# ------------------------------------------------------------------------------ one grammar
KIND_TEXT = st.sampled_from(
    [
        "random",
        "heuristic",
        "heuristic:3",
        "mcts:50",
        "pretrained",
        "az:20",
        "search:4",
        "vsearch:2",
        "az-jax:pretrained",
        "az-jax:8:pretrained",
        "model:runs/x/model.safetensors",
        "az:20:runs/x/model.safetensors",
        "search:4:/tmp/m.safetensors",
        "az-jax:runs/az/model.npz",
        "proc:python agent.py",
        "proc:sh -c 'touch x'",
        "mypkg.agents:Agent",
        "os:system",
        "subprocess:Popen",
    ]
)


@st.composite
def nested_specs(draw: st.DrawFn) -> str:
    inner = draw(KIND_TEXT)
    if draw(st.booleans()) and not inner.startswith("oracle"):
        return f"oracle:{inner}"
    return inner


def expected_trust(text: str) -> Trust:
    leaf = text.removeprefix("oracle:")
    if leaf.startswith("proc:") or leaf.split(":")[0] in ("mypkg.agents", "os", "subprocess"):
        return Trust.RUNS_CODE
    if leaf.startswith("az-jax:"):
        return Trust.BUILTIN if leaf.endswith(":pretrained") else Trust.READS_FILE
    if leaf.startswith("model:") or leaf.count(":") >= 2:
        return Trust.READS_FILE
    return Trust.BUILTIN


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nested_specs())
def test_every_entry_point_refuses_what_its_rule_refuses(text: str) -> None:
    """The grammar gives each nested spec its trust class; the league file, the web page / MCP,
    ``--isolate`` and ``--resume`` each refuse exactly what their rule refuses."""
    from polarzoo.baselines.evaluation.league import member_problem

    trust = parse_spec(text).trust
    assert trust is expected_trust(text), text
    assert (member_problem(text) is not None) == (trust is Trust.RUNS_CODE)  # a league file: no code
    assert member_problem(text, trusted=[text]) is None  # named on the command line
    assert (page_agent_problem(text, ENV) is not None) == (trust is not Trust.BUILTIN)  # a request: built-in only
    assert names_code_or_file(text) == (trust is not Trust.BUILTIN)  # --isolate plays it in its own process


@pytest.mark.parametrize(
    "text",
    [
        "",
        "x" * 2000,
        "oracle:oracle:random",
        "mcts:²",
        "mcts:" + "9" * 50,
        "heuristic:",
        "random:3",
        "az::x",
        "a b:c",
        "proc:",
        7,
    ],
)
def test_a_string_that_is_not_a_spec_is_one_line(text: object) -> None:
    with pytest.raises(SpecError) as caught:
        parse_spec(text)
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 600
    if isinstance(text, str):
        assert names_code_or_file(text)  # refused strings are treated as code by --isolate and the rest


# ------------------------------------------------------------------------------ league files
@pytest.mark.parametrize("nested", ["oracle:proc:{python} {script}", "oracle:payload:Agent"])
def test_a_league_file_member_nesting_code_runs_nothing(tmp_path: Path, nested: str) -> None:
    """``oracle:proc:COMMAND`` and ``oracle:module:Agent`` members of a league file: refused by
    ``league rate`` in one line without ``--trust-member``; the command never runs, the module is
    never imported."""
    marker = marker_module(tmp_path)
    script = tmp_path / "agent.py"
    script.write_text(f"open({str(marker)!r}, 'a').write('ran\\n')\n")
    spec = nested.format(python=PYTHON, script=script)
    league = forged_league(tmp_path, ["random", spec])
    result = cli("polarzoo.baselines.league", "rate", "--env", ENV, "--agent", "random", "--league", str(league), cwd=tmp_path)
    one_line(result, "--trust-member")
    assert "it nests" in result.stderr
    assert not marker.exists()


def test_a_league_member_file_that_never_ends_is_refused_at_once(tmp_path: Path) -> None:
    """``model:/dev/zero`` and a FIFO in a league file: not regular files, refused before a read."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for spec in ("model:/dev/zero", f"model:{fifo}", f"az:5:{tmp_path}"):
        league = forged_league(tmp_path, ["random", spec])
        started = time.monotonic()
        result = cli("polarzoo.baselines.league", "show", "--env", ENV, "--league", str(league), cwd=tmp_path)
        assert time.monotonic() - started < scaled(60)
        one_line(result, "not a regular file")


# ------------------------------------------------------------------------------ run folders
def test_evaluate_resume_of_a_folder_naming_code_needs_trust_again(tmp_path: Path) -> None:
    """A run folder is data: its saved command's ``proc:`` / ``module:callable`` agents run only
    when ``--trust SPEC`` names them again; the refusal names the spec."""
    marker = marker_module(tmp_path)
    out = tmp_path / "eval"
    out.mkdir()
    for saved in (["payload:Agent"], [f'oracle:proc:{PYTHON} -c \'open("{marker}", "w")\'']):
        (out / "command.json").write_text(json.dumps({"argv": ["--env", ENV, "--agents", *saved, "random", "--games", "1"]}))
        result = cli("polarzoo.baselines.evaluate", "--resume", str(out), "--no-progress", cwd=tmp_path)
        one_line(result, f"--trust {saved[0]}" if " " not in saved[0] else "--trust")
        assert saved[0][:20] in result.stderr
        assert not marker.exists()
    (out / "command.json").write_text(json.dumps({"argv": ["--env", ENV, "--agents", "payload:Agent", "random", "--games", "1"]}))
    trusted = cli("polarzoo.baselines.evaluate", "--resume", str(out), "--no-progress", "--trust", "payload:Agent", cwd=tmp_path)
    assert trusted.returncode == 0, trusted.stderr[-2000:]
    assert marker.exists()  # named again, it runs


def test_a_saved_trust_pickles_is_not_replayed(tmp_path: Path) -> None:
    out = tmp_path / "eval"
    out.mkdir()
    (out / "command.json").write_text(json.dumps({"argv": ["--env", ENV, "--agents", "random", "heuristic", "--trust-pickles"]}))
    one_line(cli("polarzoo.baselines.evaluate", "--resume", str(out)), "add --trust-pickles again")


def test_league_rate_resume_of_a_folder_naming_code_needs_trust_again(tmp_path: Path) -> None:
    marker = marker_module(tmp_path)
    out = tmp_path / "rate"
    out.mkdir()
    (out / "command.json").write_text(json.dumps({"argv": ["rate", "--env", ENV, "--agent", "oracle:payload:Agent"]}))
    result = cli("polarzoo.baselines.league", "rate", "--resume", str(out), cwd=tmp_path)
    one_line(result, "--trust oracle:payload:Agent")
    assert not marker.exists()


def test_train_resume_of_a_config_naming_code_needs_trust_again(tmp_path: Path) -> None:
    import yaml

    from polarzoo.baselines.training.ppo import load_config

    marker = marker_module(tmp_path)
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    config = load_config(ENV)
    config["opponents"] = {"random": 0.5, "oracle:payload:Agent": 0.5}
    (run / "config.yaml").write_text(yaml.safe_dump(config))
    result = cli("polarzoo.baselines.train", "--resume", str(run), cwd=tmp_path)
    one_line(result, "--trust oracle:payload:Agent")
    assert not marker.exists()


# ------------------------------------------------------------------------------ checkpoints
def _trained_run(tmp_path: Path) -> Path:
    result = cli(
        "polarzoo.baselines.train",
        "--env",
        ENV,
        "--quick",
        "--bc-games",
        "0",
        "--total-timesteps",
        "256",
        "--checkpoint-every",
        "128",
        "--eval-every",
        "0",
        "--snapshot-every",
        "0",
        "--no-final-eval",
        "--no-progress",
        "--runs",
        str(tmp_path),
        "--run-name",
        "run",
        timeout=scaled(600),
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return tmp_path / "run"


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _trained_run(tmp_path_factory.mktemp("checkpoints"))


def test_a_checkpoint_holds_no_pickle(trained_run: Path) -> None:
    folder = trained_run / "checkpoints"
    names = sorted(p.name for p in folder.iterdir())
    assert "latest.safetensors" in names and "exact.npz" in names and not [n for n in names if n.endswith((".pkl", ".zip"))]
    with np.load(folder / "exact.npz", allow_pickle=False) as data:  # would raise on an object array
        assert all(data[key].dtype != object for key in data.files)


@pytest.mark.parametrize(
    "gadget",
    [
        {"__object__": "posix.system", "id": 99, "state": "touch {marker}"},
        {"__object__": "subprocess.Popen", "id": 99, "state": {"__dict__": [["args", "touch {marker}"]]}},
        {
            "__object__": "polarzoo.baselines.agents.process.ProcessAgent",
            "id": 99,
            "state": {"__dict__": [["argv", ["touch", "{marker}"]]]},
        },
        {"__live__": "builtins.function"},
        {"__generator__": {"__dict__": [["bit_generator", "os.system"]]}},
    ],
    ids=["os.system", "subprocess.Popen", "ProcessAgent", "live", "bit-generator"],
)
def test_a_crafted_exact_state_runs_nothing_and_is_one_line(tmp_path: Path, trained_run: Path, gadget: dict) -> None:
    """Dotted names in a checkpoint (the restricted unpickler's bypass: an allowed module's
    attribute that is ``os.system``): the tree names types, and a type that is not the live
    object's is refused; nothing is built from a name."""
    run = tmp_path / "run"
    shutil.copytree(trained_run, run)
    marker = tmp_path / "ran.txt"
    exact = run / "checkpoints" / "exact.npz"
    with np.load(exact, allow_pickle=False) as data:
        arrays = {key: data[key] for key in data.files}
    tree = json.loads(str(arrays.pop("__tree__")))
    text = json.dumps(gadget).replace("{marker}", str(marker))
    # the payload in place of the first env's stack
    tree_text = json.dumps(tree)
    envs_at = tree_text.index('"envs"')
    start = tree_text.index('{"__tuple__": [{"__dict__"', envs_at)
    crafted = tree_text[:start] + '{"__tuple__": [' + text + ", " + tree_text[start + len('{"__tuple__": [') :]
    crafted_tree = json.loads(crafted)
    np.savez(exact, __tree__=np.array(json.dumps(crafted_tree)), **arrays)
    result = cli("polarzoo.baselines.train", "--resume", str(run), "--no-progress", "--no-final-eval", "--total-timesteps", "384")
    assert not marker.exists()
    one_line(result, "--resume")


def test_a_legacy_pickle_checkpoint_is_never_unpickled_without_trust(tmp_path: Path, trained_run: Path) -> None:
    """A run folder of polarzoo 0.3 and earlier whose exact.pkl would run ``os.system``: refused in one line."""
    import pickle

    run = tmp_path / "run"
    shutil.copytree(trained_run, run)
    folder = run / "checkpoints"
    marker = tmp_path / "ran.txt"
    for name in ("latest.safetensors", "exact.npz", "previous.safetensors", "previous_exact.npz"):
        (folder / name).unlink(missing_ok=True)

    class Gadget:
        def __reduce__(self):  # type: ignore[no-untyped-def]
            return (os.system, (f"touch {marker}",))

    (folder / "exact.pkl").write_bytes(pickle.dumps({"timesteps": 256, "envs": [Gadget()]}))
    (folder / "latest.zip").write_bytes(b"PK\x05\x06" + bytes(18))
    result = cli("polarzoo.baselines.train", "--resume", str(run), "--no-progress")
    one_line(result, "--trust-pickles")
    assert not marker.exists()


# ------------------------------------------------------------------------------ agent processes
def agent(tmp_path: Path, body: str, **kwargs: object) -> ProcessAgent:
    script = tmp_path / "hostile.py"
    script.write_text("import json, os, sys, time\n" + textwrap.dedent(body))
    return ProcessAgent([PYTHON, str(script)], **{"move_time": 2.0, "bank": 1.0, "log_dir": tmp_path / "logs", **kwargs})


ANSWER = 'for line in sys.stdin:\n    print(json.dumps({"action": json.loads(line)["legal_actions"][0]}), flush=True)\n'


@pytest.mark.parametrize("namespace", ["1", "0"], ids=["pid-namespace", "subreaper-only"])
@pytest.mark.parametrize("how", ["setsid-double-fork", "fork"])
def test_no_descendant_outlives_its_game(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, namespace: str, how: str) -> None:
    """A child that calls ``setsid`` and double-forks (or a plain child) would write its marker a
    second after the game; it is ended with the game, with a PID namespace or by the subreaper alone."""
    monkeypatch.setenv("POLARZOO_AGENT_NAMESPACE", namespace)
    marker = tmp_path / "outlived.txt"
    escape = "os.setsid()\n    if os.fork() == 0:\n        " if how == "setsid-double-fork" else "if True:\n        "
    body = f"""
if os.fork() == 0:
    {escape}time.sleep(1.5)
        open({str(marker)!r}, "w").write("outlived")
        os._exit(0)
    os._exit(0)
{ANSWER}"""
    record = play_game(ENV, [agent(tmp_path, body), RandomAgent()], seed=0)
    assert not record.forfeits and record.length > 0
    time.sleep(2.5)
    assert not marker.exists()


@pytest.mark.parametrize("cgroups", ["1", "0"], ids=["cgroup", "polled"])
def test_shared_memory_counts_against_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cgroups: str) -> None:
    """``mmap(-1, ...)`` shared mappings escape ``RLIMIT_DATA``; the cap covers every mapping
    (a memory cgroup where one can be made, else the tree's resident and shared memory polled)."""
    monkeypatch.setenv("POLARZOO_AGENT_CGROUPS", cgroups)
    body = """
import mmap
for line in sys.stdin:
    block = mmap.mmap(-1, 1024 ** 3)  # shared and anonymous
    for i in range(0, 1024 ** 3, 4096):
        block[i] = 1
    time.sleep(10)
"""
    started = time.monotonic()
    record = play_game(ENV, [agent(tmp_path, body, memory_mb=256, move_time=20.0), RandomAgent()], seed=0)
    assert time.monotonic() - started < scaled(20)
    assert "memory cap" in record.forfeits[0], record.forfeits


@pytest.mark.parametrize("cgroups", ["1", "0"], ids=["cgroup", "polled"])
def test_a_fork_bomb_is_held_to_the_process_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cgroups: str) -> None:
    monkeypatch.setenv("POLARZOO_AGENT_CGROUPS", cgroups)
    body = f"""
for line in sys.stdin:
    children = 0
    for _ in range(500):
        try:
            if os.fork() == 0:
                time.sleep(30)
                os._exit(0)
            children += 1
        except OSError:
            break
    open({str(tmp_path / "forked.txt")!r}, "w").write(str(children))
    time.sleep(30)
"""
    record = play_game(ENV, [agent(tmp_path, body, processes=16, move_time=3.0), RandomAgent()], seed=0)
    assert record.forfeits[0]
    forked = tmp_path / "forked.txt"
    if cgroups == "1" and Path("/sys/fs/cgroup/pids").is_dir():  # the kernel refuses the 17th process
        assert not forked.exists() or int(forked.read_text()) < 20
    time.sleep(0.5)
    assert "more than 16 processes" in record.forfeits[0] or forked.exists(), record.forfeits


def test_file_size_is_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POLARZOO_AGENT_FILE_MB", "1")
    big = tmp_path / "big.bin"
    body = f"""
for line in sys.stdin:
    with open({str(big)!r}, "wb") as handle:
        for _ in range(100):
            handle.write(b"x" * 1024 * 1024)
"""
    record = play_game(ENV, [agent(tmp_path, body), RandomAgent()], seed=0)
    assert record.forfeits[0]
    assert big.stat().st_size <= 1024 * 1024


def test_stderr_is_capped_per_game_with_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POLARZOO_AGENT_STDERR_KB", "64")
    body = "sys.stderr.write('x' * 10_000_000)\nsys.stderr.flush()\n" + ANSWER
    record = play_game(ENV, [agent(tmp_path, body), RandomAgent()], seed=0)
    assert not record.forfeits
    (log,) = (tmp_path / "logs").iterdir()
    text = log.read_text()
    assert len(text) < 64 * 1024 + 200 and "stderr was cut after 65536 bytes" in text


def test_an_agent_that_never_reads_cannot_hang_the_rater(tmp_path: Path) -> None:
    """A message larger than the pipe to an agent that stops reading: the write waits no longer
    than the agent's clock."""
    silent = agent(tmp_path, "time.sleep(60)\n", move_time=0.5, bank=0.5)
    silent._start()
    started = time.monotonic()
    with pytest.raises(AgentForfeit, match="did not read its input"):
        silent._exchange("x" * 4_000_000 + "\n", 0.5)
    assert time.monotonic() - started < scaled(5)
    silent.close()


def test_an_agent_runs_in_a_private_folder_without_the_output_folder_in_its_environment(tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    body = f"""
open({str(seen)!r}, "w").write(json.dumps({{"cwd": os.getcwd(), "env": dict(os.environ)}}))
{ANSWER}"""
    out = tmp_path / "out"
    play_game(ENV, [agent(tmp_path, body, log_dir=out / "agent-logs"), RandomAgent()], seed=0)
    view = json.loads(seen.read_text())
    assert view["cwd"] != os.getcwd() and "polarzoo-agent-" in view["cwd"] and not Path(view["cwd"]).exists()
    assert not any(str(out) in value for value in view["env"].values())
    assert "POLARZOO_AGENT_LOG_DIR" not in view["env"]


@pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed: --sandbox is refused where it is not"
)
def test_the_sandbox_has_no_network_and_a_read_only_file_system(tmp_path: Path) -> None:
    seen = tmp_path / "seen.txt"
    body = f"""
import socket
found = []
try:
    open({str(tmp_path / "written.txt")!r}, "w").write("x")
    found.append("wrote outside")
except OSError:
    found.append("read-only")
try:
    socket.create_connection(("127.0.0.1", 9), timeout=1)
    found.append("network")
except OSError:
    found.append("no network")
open("private.txt", "w").write("fine")
sys.stderr.write(" ".join(found) + "\\n")
{ANSWER}"""
    record = play_game(ENV, [agent(tmp_path, body, sandbox=True), RandomAgent()], seed=0)
    assert not record.forfeits, record.forfeits
    assert not (tmp_path / "written.txt").exists() and not seen.exists()
    (log,) = (tmp_path / "logs").iterdir()
    assert "read-only no network" in log.read_text()


def test_sandbox_where_bwrap_is_missing_is_one_line(tmp_path: Path) -> None:
    result = cli(
        "polarzoo.baselines.evaluate", "--env", ENV, "--agents", "random", "heuristic", "--sandbox", env={"PATH": "/nonexistent"}
    )
    if shutil.which("bwrap", path="/nonexistent") is None:
        one_line(result, "bubblewrap")


@pytest.mark.slow
def test_isolate_does_not_charge_the_hosts_start_up_to_the_first_move(tmp_path: Path) -> None:
    """An isolated agent whose module takes 3 s to import, under a 1 s move clock, plays."""
    (tmp_path / "slow_import.py").write_text(
        "import time\ntime.sleep(3)\nimport numpy as np\n\nclass Agent:\n    name = 'slow'\n\n"
        "    def act(self, env, agent, rng):\n        return int(np.flatnonzero(env.legal_action_mask())[0])\n"
    )
    result = cli(
        "polarzoo.baselines.evaluate",
        "--env",
        ENV,
        "--agents",
        "slow_import:Agent",
        "random",
        "--games",
        "1",
        "--isolate",
        "--move-time",
        "1",
        "--out",
        str(tmp_path / "eval"),
        "--no-progress",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    summary = json.loads((tmp_path / "eval" / "eval.json").read_text())
    assert not summary.get("forfeits"), summary.get("forfeits")


@pytest.mark.parametrize("value", ["-5", "lots", "0", "1e9"])
def test_a_bad_agent_memory_variable_is_one_line_naming_it(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POLARZOO_AGENT_MEMORY_MB", value)
    with pytest.raises(ValueError, match="POLARZOO_AGENT_MEMORY_MB must be a positive whole number"):
        ProcessAgent(["true"])


def test_a_forfeit_reason_is_capped() -> None:
    assert len(AgentForfeit("x" * 100_000).reason) <= 300


# ------------------------------------------------------------------------------ files and JSON
def test_a_small_model_file_naming_a_huge_network_is_refused_before_building(tmp_path: Path) -> None:
    """556 bytes whose header names a network of 10^10 parameters: one line, nothing allocated."""
    from safetensors.numpy import save

    from polarzoo.baselines.policies.weights import FORMAT, FORMAT_VERSION, ModelFileError, load_policy

    settings = {
        "policy_class": "MaskableActorCriticPolicy",
        "policy_kwargs": {"net_arch": [100_000, 100_000]},
        "observation_space": {"type": "Box", "shape": [100_000], "dtype": "float32", "low": 0, "high": 1},
        "action_space": {"type": "Discrete", "n": 10},
    }
    path = tmp_path / "giant.safetensors"
    path.write_bytes(
        save(
            {"x": np.zeros(1, np.float32)},
            metadata={"format": FORMAT, "format_version": FORMAT_VERSION, "settings": json.dumps(settings)},
        )
    )
    assert path.stat().st_size < 1000
    started = time.monotonic()
    with pytest.raises(ModelFileError, match="refused before building it"):
        load_policy(path)
    assert time.monotonic() - started < scaled(5)


@pytest.mark.parametrize("payload", ["[" * 100_000 + "]" * 100_000, '{"a": ' + "1" * 5000 + "}", '{"a": NaN}', '{"a": "\\ud800"'])
def test_the_one_json_reader_refuses_in_one_line(payload: str) -> None:
    with pytest.raises(DataError) as caught:
        loads_json(payload, what="test")
    assert "\n" not in str(caught.value)


def test_a_deep_agent_reply_is_a_forfeit_not_a_traceback(tmp_path: Path) -> None:
    body = "for line in sys.stdin:\n    print('[' * 50000 + ']' * 50000, flush=True)\n"
    record = play_game(ENV, [agent(tmp_path, body), RandomAgent()], seed=0)
    assert "not JSON" in record.forfeits[0] and "nested deeper" in record.forfeits[0]


def test_a_deep_replay_line_is_one_line(tmp_path: Path) -> None:
    from polarzoo.baselines.play.replay import ReplayError, read_records

    for line in ("[" * 100_000, '{"game": ' + "9" * 5000 + "}"):
        with pytest.raises(ReplayError):
            read_records(line)


def test_a_deep_league_file_is_one_line(tmp_path: Path) -> None:
    from polarzoo.baselines.evaluation.league import LeagueError, load_league

    path = tmp_path / "league.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(LeagueError, match="nested deeper"):
        load_league(path)


def test_an_in_process_agent_answering_out_of_range_forfeits() -> None:
    class Wild:
        name = "wild"

        def act(self, env, agent, rng):  # type: ignore[no-untyped-def]
            return 10**9

    class NotANumber:
        name = "nan"

        def act(self, env, agent, rng):  # type: ignore[no-untyped-def]
            return "b2"

    for player, words in ((Wild(), "out of range"), (NotANumber(), "not a whole number")):
        record = play_game(ENV, [player, RandomAgent()], seed=0)
        assert record.scores == [0.0, 1.0] and words in record.forfeits[0]


@pytest.mark.parametrize("move", ["²", "5" * 5000, 10**40, -1, "٣"])
def test_mcp_play_refuses_odd_numbers_in_one_line(move: object) -> None:
    pytest.importorskip("mcp")
    from polarzoo.baselines.arena.mcp import Games
    from polarzoo.baselines.play.web_game import BadRequest

    games = Games()
    state = games.new_game(ENV, "random", 0, 0, None)
    with pytest.raises(BadRequest) as caught:
        games.play(state["game_id"], move)  # type: ignore[arg-type]
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("after", [0.3, 1.5, 4.0])
def test_ctrl_c_while_evaluate_imports_is_one_line_and_130(after: float) -> None:
    """SIGINT at any moment of the start-up (numpy, torch, the model) or of the games: exit 130,
    no traceback."""
    import signal

    process = subprocess.Popen(
        [
            PYTHON,
            "-m",
            "polarzoo.baselines.evaluate",
            "--env",
            ENV,
            "--agents",
            "pretrained",
            "heuristic",
            "--games",
            "200",
            "--no-progress",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Python's own Ctrl-C: a program started in the background of a non-interactive shell
        # (as CI may start the suite) inherits SIGINT ignored
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(after)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=scaled(60))
    assert process.returncode == 130, stderr[-2000:]
    assert "Traceback" not in stderr, stderr[-2000:]


def test_every_kind_of_the_grammar_has_a_builder() -> None:
    """A new kind is one grammar entry and one builder: neither can be missing."""
    from polarzoo.baselines.agents.registry import BUILDERS
    from polarzoo.baselines.agents.spec import KINDS

    assert set(BUILDERS) == set(KINDS) | {"module"}
