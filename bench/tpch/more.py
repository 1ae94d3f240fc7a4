"""The TPC-H queries written on the tables loaded once after bench/tpch/tables.py
(Q8, Q2, Q20, Q15), by name: tables.py adds MORE to its QUERIES."""
from __future__ import annotations

from bench.tpch.q8 import q8

MORE = {"Q8": q8}
