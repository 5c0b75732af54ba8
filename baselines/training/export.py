"""Make a saved MaskablePPO model self-contained and small, for shipping.

    python -m polarzoo.baselines.export runs/fire_and_ice_v0-XXXX/snapshots/snapshot_400000.zip \\
        baselines/pretrained/fire_and_ice_v0.zip

The copy keeps the policy weights and hyperparameters; it drops what refers to the training run: the
last rollout's observations, the episode statistics and the TensorBoard path (SB3 needs the
optimizer's state to load a model, so that stays); its action space is a plain ``Discrete``.  Loading
it reads no other file.
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path

from polarzoo.baselines.cli.runs import HelpFormatter, prog_name


def export_model(source: Path, target: Path) -> Path:
    import gymnasium
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(str(source), device="cpu")
    model.action_space = gymnasium.spaces.Discrete(int(model.action_space.n))
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog=prog_name("polarzoo.baselines.export"), description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument("model", type=Path, help="a saved MaskablePPO model.zip")
    parser.add_argument("out", type=Path, help="where to write the self-contained copy")
    args = parser.parse_args(argv)
    if not args.model.is_file():
        parser.error(f"{args.model}: no such model file")
    try:
        path = export_model(args.model, args.out)
    except OSError as error:
        parser.error(f"{args.out}: cannot write the copy ({error.strerror or error})")
    except Exception as error:  # a file that is not a saved model
        parser.error(f"{args.model}: not a readable MaskablePPO model ({type(error).__name__}: {str(error).splitlines()[0]})")
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
