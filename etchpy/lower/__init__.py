"""Lowering: a plan's streams to a whole Imp program with output writes.

Read top to bottom: program (what lowering produces), target (the output-target
protocol and its frozen Context), targets/ (one module per output kind),
outputs (which target an output gets), schedule/ (one module per schedule
pass, each switched by its Tuning field), driver (Etch's Fig. 4 and lower_plan).
"""
from .driver import lower_plan
from .program import (Output, Param, Program, describe_inputs, describe_output,
                      run_program)
from .schedule.bounds import entries_bound

__all__ = ["lower_plan", "Output", "Param", "Program", "describe_output", "describe_inputs", "run_program",
           "entries_bound"]
