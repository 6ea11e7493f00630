"""Derived figures computed from parsed frames."""

# An op index or layer id read from a log drives a per-step sweep (the live-buffer curve of an MCU plan,
# the RKNN pool's per-step frame), one row per step between the first and the last. The largest models
# have a few thousand ops; an index over this limit (a cut or spliced line) is not trusted as a step.
MAX_OP_INDEX = 1_000_000
