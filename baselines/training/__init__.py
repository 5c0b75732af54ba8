"""Trainers: MaskablePPO with self-play and snapshot opponents (:mod:`.ppo`, its defaults in
each game kit's ``hyperparams``), behaviour cloning (:mod:`.imitation`), AlphaZero on the JAX twins
(:mod:`.alphazero_jax`), the solitaire trainer (:mod:`.solitaire`), RLlib (:mod:`.rllib`) and the
ONNX export of a trained policy (:mod:`.export`).  The top of ``baselines/``: it may use
evaluation, agents, policies and the CLI helpers; nothing imports it."""
