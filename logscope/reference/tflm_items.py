"""The names of the check_summary items of an MCU check (TFLM prediction against a trace).

The check writes them and the REF004/REF005 rules read them; they live in this module of plain
constants so the rules can name them without loading the checker (pandas frames, the .tflite loader).
"""

from __future__ import annotations

HEAD = "arena head (TFLM greedy plan)"
TAIL = "arena tail (persistent allocations)"
TOTAL = "arena total"
EVAL_COUNT = "TfLiteEvalTensor count (model tensors)"
NODE_COUNT = "NodeAndRegistration count (model operators)"
TRACE_OPS = "heap-trace ops (model operators)"
TRACE_OP_TYPES = "heap-trace op types (model operators)"
OP_LIST = "profiled operator types (model operators)"
STATED_ARENA = "stated arena vs needed"
OP_DELTA_PREFIX = "heap-trace op "
CONSTANT_DATA = "model constant data (model buffers)"
PLAN_BUFFERS = "memory-plan buffers found in the model's plan"
PLAN_OFFSETS = "memory-plan offsets (GreedyMemoryPlanner)"
MEMBERSHIP_ITEMS = (EVAL_COUNT, NODE_COUNT, TRACE_OPS, TRACE_OP_TYPES, OP_LIST, PLAN_BUFFERS)
