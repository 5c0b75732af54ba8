"""``python -m polarzoo.baselines.alphazero_jax`` (console script ``polarzoo-alphazero-jax``): AlphaZero on the JAX twins.

The code is :mod:`polarzoo.baselines.training.alphazero_jax`; this module keeps the documented command.
"""

from polarzoo.baselines.training.alphazero_jax import main

if __name__ == "__main__":
    main()
