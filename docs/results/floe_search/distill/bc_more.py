"""Experiment: the distill2 demonstrations cloned for more epochs (from the shipped model)."""

import sys

import numpy as np
import torch
from sb3_contrib import MaskablePPO

from polarzoo.baselines.training.imitation import clone

torch.set_num_threads(1)
epochs = int(sys.argv[1])
model = MaskablePPO.load("baselines/pretrained/go_with_the_floe_v0.zip", device="cpu")
data = np.load("runs/floe-distill2-s0/demonstrations.npz")
losses = clone(model, data["observations"], data["masks"], data["actions"], epochs=epochs, seed=0)
print("losses", [round(l, 4) for l in losses])
model.save(f"runs/floe-bc{epochs}.zip")
