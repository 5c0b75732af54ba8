"""One MaskablePPO minibatch step of each board policy, two ways, in one process (an A/B).

    python -m benchmarks.update_step --json docs/results/update_step.json

A step is what the update does per minibatch: ``BoardPolicy.evaluate_actions`` on 256 rows, the
backward pass and Adam, on one torch thread, with the game's network as its kit configures it.
The rows come from random play (seeded), the actions are legal ones drawn at random.  The two
sides alternate, step by step, and each side's median is reported with the ratio:

* Fire & Ice and the Floe: ``update_precision`` float32 against bfloat16 (the trunk autocast to
  bfloat16 with gradients on; on a CPU without bfloat16 arithmetic it is emulated and slower);
* Thin Ice: the legal actions scored in one padded group (``legal_buckets = 1``, the code before)
  against the network's own ``legal_buckets`` (groups of rows of like counts);
* with ``--compile`` (Fire & Ice and the Floe): the trunk's blocks as they are against the same
  blocks through ``torch.compile`` (TorchInductor's C++ kernels, shapes fixed), float32 both; the
  compilation (the first steps) is timed apart.

Each game's line also gives a step's arithmetic (its matrix products and convolutions, forward
and backward, by ``torch.utils.flop_counter``) and the rate the first side reaches: how near the
core's arithmetic speed the update already runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, cast

from benchmarks import write_json
from polarzoo.baselines.kits import games_with


def ab(env_id: str, steps: int, seed: int, compiled: bool = False) -> dict[str, Any]:
    """The game's two sides, alternating, ``steps`` timed steps each after two warm-ups."""
    import torch
    from sb3_contrib import MaskablePPO
    from torch import nn
    from torch.utils.flop_counter import FlopCounterMode

    from polarzoo.baselines.policies.networks import native_bfloat16
    from polarzoo.baselines.training.config import TrainConfig, load_config, policy_and_kwargs
    from polarzoo.wrappers import SingleAgentEnv
    from polarzoo.wrappers.single_agent import random_play_rows

    torch.manual_seed(seed)
    config = TrainConfig.from_mapping(load_config(env_id))
    policy_class, policy_kwargs = policy_and_kwargs(config)
    model = MaskablePPO(policy_class, SingleAgentEnv(env_id), policy_kwargs=policy_kwargs, seed=seed, device="cpu")
    policy, network = model.policy, model.policy.mlp_extractor
    observations, masks, actions = (torch.as_tensor(rows) for rows in random_play_rows(SingleAgentEnv(env_id), 256, seed))
    sides: dict[str, dict[str, Any]]
    if compiled:
        eager = cast(nn.Module, network.blocks)

        def compiled_module(module: nn.Module) -> nn.Module:
            # the same parameters either way: a compiled module wraps its original
            return cast(nn.Module, torch.compile(module, dynamic=False))

        fast = nn.ModuleList(map(compiled_module, eager)) if isinstance(eager, nn.ModuleList) else compiled_module(eager)
        sides = {"eager": {"blocks": eager}, "compiled": {"blocks": fast}}
    elif getattr(network, "legal_buckets", 1) > 1:  # a network that groups its rows: grouped or not
        sides = {"one group": {"legal_buckets": 1}, f"{network.legal_buckets} groups": {"legal_buckets": network.legal_buckets}}
    else:
        sides = {"float32": {"autocast_dtype": None}, "bfloat16": {"autocast_dtype": torch.bfloat16}}

    def step() -> None:
        values, log_prob, entropy = policy.evaluate_actions(observations, actions, masks)
        assert entropy is not None  # (the masked distribution has one)
        loss = values.mean() - log_prob.mean() - 0.01 * entropy.mean()
        policy.optimizer.zero_grad()
        loss.backward()
        policy.optimizer.step()

    # The arithmetic of one step on the first side (matrix products and convolutions, forward and
    # backward, as torch's FLOP counter counts them): with the median time, how near the core's
    # arithmetic speed the step runs.
    for attribute, value in next(iter(sides.values())).items():
        setattr(network, attribute, value)
    with FlopCounterMode(display=False) as counter:
        step()
    flops = counter.get_total_flops()
    times: dict[str, list[float]] = {name: [] for name in sides}
    warm_up: dict[str, float] = dict.fromkeys(sides, 0.0)
    for repeat in range(steps + 2):
        for name, attributes in sides.items():
            for attribute, value in attributes.items():
                setattr(network, attribute, value)
            began = time.perf_counter()
            step()
            if repeat >= 2:
                times[name].append(1000 * (time.perf_counter() - began))
            else:
                warm_up[name] += time.perf_counter() - began
    first, second = sides
    record: dict[str, Any] = {"sides": [first, second]}
    record.update({name: round(statistics.median(ms), 1) for name, ms in times.items()})
    record["ratio"] = round(statistics.median(a / b for a, b in zip(times[first], times[second])), 2)
    record["gflop_a_step"] = round(flops / 1e9, 3)
    record[f"gflop_per_second_{first}"] = round(flops / 1e6 / record[first], 1)
    if "bfloat16" in sides:
        record["native_bfloat16"] = native_bfloat16()
    if compiled:
        record["warm_up_seconds"] = {name: round(seconds, 1) for name, seconds in warm_up.items()}
    return record


def matmul_rate(size: int = 1024, repeats: int = 20) -> float:
    """GFLOP/s of a large float32 matrix product on this thread (the median of ``repeats``): the
    core's arithmetic speed as torch reaches it, the yardstick for a step's rate."""
    import torch

    a, b = torch.randn(size, size), torch.randn(size, size)
    a @ b  # warm-up
    seconds = []
    for _ in range(repeats):
        began = time.perf_counter()
        a @ b
        seconds.append(time.perf_counter() - began)
    return round(2 * size**3 / statistics.median(seconds) / 1e9, 1)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    boards = games_with("network")
    parser.add_argument(
        "--envs", nargs="+", default=boards, choices=boards, help=f"games with a board network (default: {' '.join(boards)})"
    )
    parser.add_argument("--steps", type=int, default=20, help="timed steps a side (default: 20)")
    parser.add_argument("--seed", type=int, default=0, help="the rows' and the network's seed (default: 0)")
    parser.add_argument(
        "--compile", action="store_true", help="eager trunk blocks against torch.compile'd ones (Fire & Ice and the Floe)"
    )
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error(f"--steps must be at least 1, got {args.steps}")
    if args.compile and "thin_ice_v0" in args.envs:
        parser.error("--compile compares Fire & Ice's and the Floe's trunks: name them with --envs")
    import torch

    torch.set_num_threads(1)
    results: dict[str, Any] = {}
    for env_id in args.envs:
        results[env_id] = ab(env_id, args.steps, args.seed, args.compile)
        record = results[env_id]
        first, second = record["sides"]
        print(
            f"{env_id}: {first} {record[first]} ms, {second} {record[second]} ms a 256-row step ({record['ratio']}x); "
            f"{record['gflop_a_step']} GFLOP a step, {record[f'gflop_per_second_{first}']} GFLOP/s {first}",
            flush=True,
        )
    results["matmul_gflop_per_second"] = matmul_rate()
    print(
        f"the core's arithmetic, a 1024 x 1024 float32 matrix product: {results['matmul_gflop_per_second']} GFLOP/s", flush=True
    )
    results["load_1min"] = os.getloadavg()[0]
    command = "python -m benchmarks.update_step " + " ".join(argv if argv is not None else sys.argv[1:])
    write_json(args.json, {"command": command.strip(), "results": results})


if __name__ == "__main__":
    main()
