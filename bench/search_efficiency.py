#!/usr/bin/env python3
"""Compares two tuning runs of the same workload stored in two SQLite databases (for example the
evolutionary search with XGBoost and the random ReplayTrace baseline): the best median after every
trial of each run, in commit order, and how many trials the first run needed to reach the second
run's final best. Prints one JSON line.

Usage: bench/search_efficiency.py FIRST.db SECOND.db WORKLOAD
WORKLOAD is a spec NAME:ARGS (matched by its structural hash, from `tirtune workload print`; the
tirtune binary is $TIRTUNE, default build/release/src/tirtune) or a bare name when each database
holds one workload of that name.
"""
import json
import os
import sqlite3
import subprocess
import sys


def workload_hash(spec):
    tirtune = os.environ.get("TIRTUNE", "build/release/src/tirtune")
    header = subprocess.run([tirtune, "workload", "print", spec], check=True, capture_output=True,
                            text=True).stdout.splitlines()[0]
    return header.split("hash=")[1].split()[0]


def best_curve(path, workload):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    if ":" in workload:
        where, key = "w.shash = ?", workload_hash(workload)
    else:
        where, key = "w.name = ?", workload
    rows = db.execute(
        "SELECT r.status, r.median_secs FROM tuning_record r JOIN workload w "
        f"ON w.id = r.workload_id WHERE {where} ORDER BY r.id", (key,)).fetchall()
    if not rows:
        sys.exit(f"{path}: no records of workload '{workload}'")
    curve, best = [], float("inf")
    for status, median in rows:
        if status == "ok" and median is not None:
            best = min(best, median)
        curve.append(best)
    return curve


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    first, second = best_curve(sys.argv[1], sys.argv[3]), best_curve(sys.argv[2], sys.argv[3])
    target = second[-1]
    reached = next((i + 1 for i, b in enumerate(first) if b <= target), None)
    checkpoints = {n: (first[n - 1] if n <= len(first) else None) for n in (64, 128, 256, 512, 1000)}
    print(json.dumps({
        "workload": sys.argv[3],
        "first_trials": len(first), "first_best_ms": first[-1] * 1e3,
        "second_trials": len(second), "second_best_ms": target * 1e3,
        "first_trials_to_reach_second_best": reached,
        "share_of_second_budget": None if reached is None else round(reached / len(second), 3),
        "first_best_ms_at": {n: (None if v is None else round(v * 1e3, 4))
                             for n, v in checkpoints.items()},
    }))


if __name__ == "__main__":
    main()
