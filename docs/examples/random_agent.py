"""A polarzoo process agent in Python: reads one JSON object per line (a turn), answers one.

    python -m polarzoo.baselines.evaluate --env go_with_the_floe_v0 \\
        --agents "proc:python docs/examples/random_agent.py" random --move-time 1

It plays a uniformly random legal move; the message also has the game's state and the seat's
observation (docs/arena.md) for an agent that thinks.
"""

import json
import random
import sys

for line in sys.stdin:
    turn = json.loads(line)
    print(json.dumps({"action": random.choice(turn["legal_actions"])}), flush=True)
