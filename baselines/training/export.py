"""Make a saved MaskablePPO model small and safe to share: a weight-only ``.safetensors`` file.

    python -m polarzoo.baselines.export runs/fire_and_ice_v0-XXXX/snapshots/snapshot_400000.zip \\
        baselines/pretrained/fire_and_ice_v0.safetensors

A ``.safetensors`` target holds the policy's weights and, as JSON, its architecture and spaces
(:mod:`polarzoo.baselines.policies.weights`): loading it runs nothing, and every ``model:PATH``
spec reads it.  The source is read without unpickling (a zip whose policy exists only as a pickle
needs ``--trust-pickles``).  A ``.zip`` target writes an SB3 zip instead (for SB3's own
``MaskablePPO.load``, e.g. to train on from it):

The copy keeps the policy weights and hyperparameters; it drops what refers to the training run: the
last rollout's observations, the episode statistics and the TensorBoard path (SB3 needs the
optimizer's state to load a model, so that stays); its action space is a plain ``Discrete``.  Loading
it reads no other file.
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path
from typing import Any

from polarzoo.baselines.cli.runs import (
    HelpFormatter,
    add_trust_pickles,
    apply_trust_pickles,
    prog_name,
    writable_folder_or_exit,
    writes_fail_in_one_line,
)
from polarzoo.baselines.policies.weights import load_policy, save_policy


def export_model(source: Path, target: Path) -> Path:
    if target.suffix != ".zip":
        model = load_policy(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        return save_policy(model, target)  # its settings and timesteps come with it
    import gymnasium
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(str(source), device="cpu")
    actions: Any = model.action_space
    model.action_space = gymnasium.spaces.Discrete(int(actions.n))
    model.tensorboard_log = None
    model._last_obs = None
    model._last_episode_starts = None
    model.ep_info_buffer = collections.deque(maxlen=1)
    model.ep_success_buffer = collections.deque(maxlen=1)
    target.parent.mkdir(parents=True, exist_ok=True)
    # Written whole or not at all: a temporary name, then a rename.
    temporary = target.with_name(target.stem + ".tmp.zip")
    try:
        model.save(str(temporary))
        temporary.replace(target)
    finally:
        temporary.unlink(missing_ok=True)
    return target


def _main_writes(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog=prog_name("polarzoo.baselines.export"), description=__doc__, formatter_class=HelpFormatter
    )
    parser.add_argument("model", type=Path, help="a saved MaskablePPO model.zip (or .safetensors)")
    parser.add_argument(
        "out", type=Path, help="where to write the copy: NAME.safetensors (weights only) or NAME.zip (SB3's format)"
    )
    add_trust_pickles(parser)
    args = parser.parse_args(argv)
    apply_trust_pickles(args)
    if not args.model.is_file():
        parser.error(f"{args.model}: no such model file")
    if args.out.suffix == ".zip" and not args.trust_pickles:
        parser.error(
            f"{args.out}: an SB3 zip is written by loading the source with SB3, which runs its pickles: "
            "write NAME.safetensors, or add --trust-pickles if you trust the source"
        )
    writable_folder_or_exit(parser, "out", args.out.parent)
    try:
        path = export_model(args.model, args.out)
    except OSError as error:  # a full disk or a folder that cannot be written: nothing half-written is left
        print(f"error: {args.out}: cannot write the copy ({error.strerror or error}); nothing was written", file=sys.stderr)
        sys.exit(1)
    except Exception as error:  # a file that is not a saved model
        parser.error(f"{args.model}: not a readable MaskablePPO model ({type(error).__name__}: {str(error).splitlines()[0]})")
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB)")


main = writes_fail_in_one_line(_main_writes)


if __name__ == "__main__":
    main()
