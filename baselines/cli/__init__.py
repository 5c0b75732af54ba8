"""What every CLI of the baselines shares: run folders (unique, announced, never overwritten),
atomic writes, argument types, the help format and ``--quick`` (:mod:`.runs`), and progress
lines or bars (:mod:`.progress`).  The bottom of ``baselines/``: it imports nothing above it."""
