"""Many consumers on one queue: concurrent cases, their histories, and the checker that judges a history against the
model by finding an order of its operations consistent with every answer.

- `history.py`: what a concurrent case recorded (each operation with its client and its [invoke, complete] window)
- `parts.py`: a history cut into the independent parts the semantics allow (per message; per group on FIFO)
- `search.py`: one part's search for an order and a permitted outcome at each step (memoised, bounded)
- `checker.py`: a history's verdict: every part searched, rules named among consumers, early returns counted
- `shrink.py`: the smallest part of a failing history that still fails, for the same rule
- `workload.py`: the clients' generated programs
- `clients.py`: clients running those programs on one target: real threads, or an interleaving drawn by Hypothesis
- `finding.py`: a failing history as one row per client, and a script that replays it with threads
- `run.py`: `run --clients N`: cases, checks, findings and the trace
"""
