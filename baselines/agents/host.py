"""The host of an isolated Python agent (``--isolate``): ``python -m polarzoo.baselines.agents.host
SPEC ENV_ID`` makes the agent of ``SPEC`` in this process (its module imported, its files read
here) and answers the arena protocol (:mod:`polarzoo.baselines.agents.process`) on stdin /
stdout: each turn it plays ``act(env, seat, rng)`` on the env the rater sent (``"env"``, pickled
by the rater) and answers ``{"action": id}``.  The rater runs this under the arena's limits and
reads back one JSON object a turn, so the agent's code never runs in the rater's process."""

from __future__ import annotations

import base64
import json
import pickle
import sys

import numpy as np

from polarzoo.baselines.agents.registry import make_agent


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        sys.exit("usage: python -m polarzoo.baselines.agents.host SPEC ENV_ID")
    spec, env_id = args
    replies, sys.stdout = sys.stdout, sys.stderr  # what the agent prints goes to its log, not into the protocol
    agent = make_agent(spec, env_id)
    replies.write('{"ready": true}\n')  # imports done: the rater starts the first move's clock now
    replies.flush()
    rng = np.random.default_rng(0)  # one process per game: the same agent plays the same game
    for line in sys.stdin:
        message = json.loads(line)
        env = pickle.loads(base64.b64decode(message["env"]))  # sent by the rater, never by the agent
        action = int(agent.act(env, message["seat"], rng))
        replies.write(json.dumps({"action": action}) + "\n")
        replies.flush()


if __name__ == "__main__":
    main()
